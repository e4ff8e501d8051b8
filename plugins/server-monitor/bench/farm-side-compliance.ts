import { CADENCE_MS, Tier, TIERS } from '../src/shared/plans';
import { complianceOf, StrictCompliance } from './strict-compliance';

/**
 * SLA compliance as the monitored side sees it: for each whole cadence window from `origin` (a whole
 * minute of the wall clock, when the benchmark's first dispatch calls come) to `end` (premium 60 s, free
 * 300 s; the first window, with the first pass, included), the share of the tier's servers the target farm
 * was asked for at least once within it. `servers` gives each tier's farm numbers (`?s=<n>`), lo to hi - 1.
 */
export async function farmSideCompliance(
  farmUrl: string,
  origin: number,
  end: number,
  servers: Record<Tier, [number, number]>,
): Promise<Record<Tier, StrictCompliance & { window_seconds: number }>> {
  const out = {} as Record<Tier, StrictCompliance & { window_seconds: number }>;
  for (const tier of TIERS) {
    const window = CADENCE_MS[tier];
    const [lo, hi] = servers[tier];
    const windows = Math.floor((end - origin) / window);
    const query = new URLSearchParams({ from: String(origin), window: String(window), windows: String(windows) });
    query.set('lo', String(lo));
    query.set('hi', String(hi));
    const answer = await fetch(`${farmUrl}/seen?${query}`);
    if (!answer.ok) throw new Error(`the farm's /seen answered ${answer.status}`);
    out[tier] = { window_seconds: window / 1000, ...complianceOf((await answer.json()) as number[], hi - lo) };
  }
  return out;
}
