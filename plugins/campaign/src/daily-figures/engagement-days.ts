import type { Knex } from 'knex';
import { addMetricsByDay, Metrics } from './daily-metrics';
import { METRIC } from './metric-names';

const bump = (byDay: Map<string, Metrics>, day: string, n: number) => {
  const metrics = byDay.get(day) ?? byDay.set(day, {}).get(day)!;
  metrics[METRIC.lastEngaged] = (metrics[METRIC.lastEngaged] ?? 0) + n;
};

/**
 * Subscribers who engaged (a first open or click of a mail) on `day` move their latest engagement there:
 * the day counts of `engaged.last` then say how many subscribers were last active on each day, so "active
 * within 30 days" is a sum over 30 rows at any audience size. Takes each engaged subscriber's latest
 * engagement day as the caller read it (and locked it) in its transaction, and returns the day counts'
 * changes; the caller sets their `last_engaged_day`.
 */
export function engagementMoves(lastDays: Iterable<string | null>, day: string): Map<string, Metrics> {
  const byDay = new Map<string, Metrics>();
  for (const last of lastDays) {
    if (last !== null && last >= day) continue;
    bump(byDay, day, 1);
    if (last) bump(byDay, last, -1);
  }
  return byDay;
}

/** Takes deleted subscribers out of the day counts of their latest engagement (how many were last engaged each day). */
export async function forgetEngagement(
  trx: Knex.Transaction,
  organizationId: number,
  lastDays: ReadonlyMap<string, number>,
): Promise<void> {
  const byDay = new Map<string, Metrics>();
  for (const [day, n] of lastDays) bump(byDay, day, -n);
  await addMetricsByDay(trx, organizationId, byDay);
}
