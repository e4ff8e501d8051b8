import { escapeUTF8 as escapeHtml } from 'entities';
import type { Sample, WorkerStatus } from './service';
import type { Tier } from '../shared/plans';
import type { OnCall } from './on-call';
import { headlineOf } from './headline';
import { durationSince } from '../shared/durations';

/** Why an alert in "Alerts nobody heard" is there, after its organization's name. */
const UNHEARD_BECAUSE = {
  unheard: ' has no administrator to alert',
  failed: ': every try to deliver it failed',
  retrying: ': its tries are failing, more to come',
} as const;

const WIDTH = 600;
const HEIGHT = 200;
const LABEL_SIZE = 18;
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
  // Each label inside the chart (100 % and 99 % were drawn above its top, unseen): those two below their
  // lines, at either end, as the lines are 2 units apart (99 % on 100 %'s baseline, clear of the 90 % line);
  // 90 % below its own too. The chart keeps its aspect
  // (stretched to a phone's width and a fixed height, its labels were squeezed to 5 px wide), so the
  // labels are sized for a phone's scale, some 0.6.
  const label = (p: number, at: 'start' | 'end', dy: number) =>
    `<text x="${at === 'start' ? 4 : WIDTH - 4}" y="${Number(y(p)) + dy}" text-anchor="${at}" font-size="${LABEL_SIZE}" fill="#666">${p} %</text>`;
  const grid = (
    [
      [100, 'start', LABEL_SIZE],
      [99, 'end', LABEL_SIZE - 2],
      [90, 'start', LABEL_SIZE + 2],
    ] as const
  )
    .map(
      ([p, at, dy]) =>
        `<line x1="0" x2="${WIDTH}" y1="${y(p)}" y2="${y(p)}" stroke="#ccc" stroke-width="1"/>` + label(p, at, dy),
    )
    .join('');
  return (
    `<svg id="sla-chart" role="img" aria-label="SLA compliance over the last ${hours} hours" ` +
    `viewBox="0 0 ${WIDTH} ${HEIGHT}">${grid}${lines}</svg>`
  );
}

const esc = (text: string | number | null | undefined) => escapeHtml(String(text ?? ''));

/** How long since `iso`, for a person. */
const age = (iso: string | null, now: Date): string => (iso ? durationSince(new Date(iso), now) : '');
const when = (iso: string | null) => (iso ? `${iso.slice(0, 16).replace('T', ' ')} UTC` : 'unknown');
const more = (shown: number, total: number) =>
  total > shown ? `<p class="meta">and ${total - shown} more (servermonitor:servers --down lists them all)</p>` : '';

function problems(onCall: OnCall, now: Date): string {
  const parts: string[] = [];
  const { down, unheard, heartbeats, certificates } = onCall;
  parts.push(`<section id="down"><h2>Down now (${down.total})</h2>`);
  parts.push(
    down.servers.length
      ? `<ol class="problems-list">${down.servers
          .map(
            (s) =>
              `<li class="down"><span class="word">DOWN</span> <strong>${esc(s.title)}</strong> for ${age(s.since, now)}` +
              `<br><span class="meta">since ${when(s.since)} · ${esc(s.organization)} (${esc(s.plan)}) · ${esc(s.endpoint)}</span>` +
              `<br><span class="error">${esc(s.last_error ?? `answered ${s.status ?? '?'}`)}</span></li>`,
          )
          .join('')}</ol>${more(down.servers.length, down.total)}`
      : '<p class="none">No server is down.</p>',
  );
  parts.push('</section>');
  if (unheard.total)
    parts.push(
      `<section id="unheard"><h2>Alerts nobody heard (${unheard.total})</h2><ol class="problems-list">${unheard.alerts
        .map(
          (a) =>
            `<li class="warn"><span class="word">${a.status.toUpperCase()}</span> ${esc(a.subject)}<br><span class="meta">${esc(a.organization)}${UNHEARD_BECAUSE[a.status]} · since ${when(a.since)}</span></li>`,
        )
        .join('')}</ol>${more(unheard.alerts.length, unheard.total)}</section>`,
    );
  if (heartbeats.total)
    parts.push(
      `<section id="heartbeats"><h2>Missing heartbeats (${heartbeats.total})</h2><ol class="problems-list">${heartbeats.missing
        .map(
          (h) =>
            `<li class="down"><span class="word">MISSING</span> <strong>${esc(h.title)}</strong> for ${age(h.due_at, now)}<br><span class="meta">heartbeat ${h.heartbeat_id} · due ${when(h.due_at)} · ${esc(h.organization)}</span></li>`,
        )
        .join('')}</ol>${more(heartbeats.missing.length, heartbeats.total)}</section>`,
    );
  if (certificates.total)
    parts.push(
      `<section id="certificates"><h2>Certificates ending within 30 days (${certificates.total})</h2><ol class="problems-list">${certificates.expiring
        .map((c) => {
          const ended = c.valid_to !== null && new Date(c.valid_to) <= now;
          return (
            `<li class="${ended ? 'down' : 'warn'}"><span class="word">${ended ? 'EXPIRED' : 'EXPIRING'}</span> <strong>${esc(c.title)}</strong>` +
            `<br><span class="meta">${ended ? 'ended' : 'ends'} ${when(c.valid_to)} · ${esc(c.organization)}</span></li>`
          );
        })
        .join('')}</ol>${more(certificates.expiring.length, certificates.total)}</section>`,
    );
  return parts.join('\n');
}

function plans(onCall: OnCall): string {
  const rows = onCall.counts
    .map(
      (c) =>
        `<tr><th scope="row">${esc(c.plan)}</th><td class="n">${c.up}</td><td class="n${c.down ? ' down-count' : ''}">${c.down}</td>` +
        `<td class="n">${c.paused}</td><td class="n">${c.pending}</td></tr>`,
    )
    .join('');
  return (
    `<section id="plans"><h2>Servers by plan (active organizations)</h2><table><thead><tr><th scope="col">Plan</th>` +
    `<th scope="col">Up</th><th scope="col">Down</th><th scope="col">Paused</th><th scope="col">Not checked yet</th></tr></thead>` +
    `<tbody>${rows}</tbody></table></section>`
  );
}

/**
 * The page `dashboard_url` points to, for a person on call: what is wrong first (servers down, longest
 * outage first; alerts nobody heard; missing heartbeats; certificates ending), each state by colour and
 * by word, then the servers by plan and how well the workers keep up. Readable on a phone.
 */
export function renderDashboard(
  status: WorkerStatus,
  samples: Sample[],
  hours: number,
  onCall: OnCall,
  styleUrl: string,
): string {
  const now = new Date(status.timestamp);
  const troubles = onCall.down.total + onCall.unheard.total + onCall.heartbeats.total;
  const headline = headlineOf(onCall);
  const tier = (name: Tier, label: string) => {
    const c = status.sla_compliance[name];
    return (
      `<tr><th scope="row">${label}</th><td id="sla-${name}">${c.percentage.toFixed(2)} %</td>` +
      `<td>${c.checked} of ${c.total}</td><td>${status.queue_status[name] ?? 'unknown (Redis not answering)'}</td></tr>`
    );
  };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(headline)}: server monitor</title>
<link rel="stylesheet" href="${esc(styleUrl)}">
</head>
<body>
<header class="${troubles > 0 ? 'problems' : 'all-up'}">
<h1 id="headline">${esc(headline)}</h1>
<p class="meta">Workers: <span id="status" class="word status-${esc(status.status)}">${esc(status.status)}</span> · measured ${when(status.timestamp)}</p>
</header>
${problems(onCall, now)}
${plans(onCall)}
<section id="workers">
<h2>Checks on time</h2>
<p class="meta">Breaches in the last hour: <span id="breaches">${status.recent_breaches}</span>.</p>
<table>
<thead><tr><th scope="col">Plan</th><th scope="col">Checked on time</th><th scope="col">Servers</th><th scope="col">Queued</th></tr></thead>
<tbody>
${tier('premium', 'Premium (60 s)')}
${tier('free', 'Free (300 s)')}
</tbody>
</table>
<h2>Compliance, last ${hours} hours</h2>
${chart(samples, hours, now)}
<p><svg width="12" height="12"><rect width="12" height="12" fill="${COLORS.premium}"/></svg> premium
<svg width="12" height="12"><rect width="12" height="12" fill="${COLORS.free}"/></svg> free</p>
</section>
</body>
</html>
`;
}
