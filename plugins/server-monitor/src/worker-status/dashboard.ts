import { escapeUTF8 as escapeHtml } from 'entities';
import type { Sample, WorkerStatus } from './service';
import type { Tier } from '../shared/plans';

const WIDTH = 600;
const HEIGHT = 200;
const COLORS: Record<Tier, string> = { premium: '#1f6feb', free: '#d97706' };

/** A line per tier: compliance (0 to 100 %) over the hours shown, newest on the right. */
function chart(samples: Sample[], hours: number, now: Date): string {
  const start = now.getTime() - hours * 3_600_000;
  const x = (at: string) => (((new Date(at).getTime() - start) / (hours * 3_600_000)) * WIDTH).toFixed(1);
  const y = (percentage: number) => (HEIGHT - (percentage / 100) * HEIGHT).toFixed(1);
  const lines = (['premium', 'free'] as Tier[])
    .map((tier) => {
      const points = samples
        .filter((s) => s.tier === tier)
        .map((s) => `${x(s.sampled_at)},${y(s.percentage)}`)
        .join(' ');
      return points
        ? `<polyline class="sla-${tier}" points="${points}" fill="none" stroke="${COLORS[tier]}" stroke-width="2"/>`
        : '';
    })
    .join('');
  const grid = [100, 99, 90]
    .map(
      (p) =>
        `<line x1="0" x2="${WIDTH}" y1="${y(p)}" y2="${y(p)}" stroke="#ccc" stroke-width="1"/>` +
        `<text x="4" y="${Number(y(p)) - 2}" font-size="10" fill="#666">${p} %</text>`,
    )
    .join('');
  return (
    `<svg id="sla-chart" role="img" aria-label="SLA compliance over the last ${hours} hours" ` +
    `viewBox="0 0 ${WIDTH} ${HEIGHT}" width="100%" preserveAspectRatio="none">${grid}${lines}</svg>`
  );
}

/** The worker-performance page `dashboard_url` points to: the worker status, readable on a phone. */
export function renderDashboard(status: WorkerStatus, samples: Sample[], hours: number): string {
  const tier = (name: Tier, label: string) => {
    const c = status.sla_compliance[name];
    return (
      `<tr><th scope="row">${label}</th><td id="sla-${name}">${c.percentage.toFixed(2)} %</td>` +
      `<td>${c.checked} of ${c.total}</td><td>${status.queue_status[name]}</td></tr>`
    );
  };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Server monitor: ${escapeHtml(status.status)}</title>
</head>
<body>
<h1>Server monitor workers: <span id="status">${escapeHtml(status.status)}</span></h1>
<p>Measured ${escapeHtml(status.timestamp)}. Breaches in the last hour: <span id="breaches">${status.recent_breaches}</span>.</p>
<table>
<thead><tr><th scope="col">Plan</th><th scope="col">Checked on time</th><th scope="col">Servers</th><th scope="col">Queued</th></tr></thead>
<tbody>
${tier('premium', 'Premium (60 s)')}
${tier('free', 'Free (300 s)')}
</tbody>
</table>
<h2>Compliance, last ${hours} hours</h2>
${chart(samples, hours, new Date(status.timestamp))}
<p><svg width="12" height="12"><rect width="12" height="12" fill="${COLORS.premium}"/></svg> premium
<svg width="12" height="12"><rect width="12" height="12" fill="${COLORS.free}"/></svg> free</p>
</body>
</html>
`;
}
