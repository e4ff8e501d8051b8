import type { Knex } from 'knex';
import { addOnConflict, toInt } from '@switchboard/core';

/** An organization's daily figures (table analytics_daily): metric name to the amount a day adds. */
export type Metrics = Record<string, number>;

/** The UTC day of an instant, as stored: YYYY-MM-DD. */
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);

/**
 * Adds to an organization's figures of several days inside the caller's transaction: one upsert, whose rows
 * addOnConflict writes in key order, so concurrent transactions never wait on each other crosswise.
 */
export async function addMetricsByDay(
  trx: Knex | Knex.Transaction,
  organizationId: number,
  byDay: Map<string, Metrics>,
): Promise<void> {
  const rows = [...byDay].flatMap(([day, metrics]) =>
    Object.entries(metrics)
      .filter(([, value]) => value !== 0)
      .map(([metric, value]) => ({ organization_id: organizationId, metric, day, value })),
  );
  await addOnConflict(trx, 'analytics_daily', ['organization_id', 'metric', 'day'], 'value', rows);
}

/** Adds to an organization's figures of one day (see addMetricsByDay). */
export const addDailyMetrics = (
  trx: Knex | Knex.Transaction,
  organizationId: number,
  day: string,
  metrics: Metrics,
): Promise<void> => addMetricsByDay(trx, organizationId, new Map([[day, metrics]]));

/** The metrics' values per day between two days (both included); days without a row are left out. */
export async function readDailyMetrics(
  knex: Knex,
  organizationId: number,
  metrics: string[],
  from: string,
  to: string,
): Promise<Array<{ metric: string; day: string; value: number }>> {
  const rows: Array<Record<string, unknown>> = await knex('analytics_daily')
    .where('organization_id', organizationId)
    .whereIn('metric', metrics)
    .andWhere('day', '>=', from)
    .andWhere('day', '<=', to)
    .select('metric', 'day', 'value');
  return rows.map((r) => ({ metric: String(r.metric), day: String(r.day), value: toInt(r.value) }));
}

/** Each metric's sum between two days (both included); absent metrics are 0. */
export async function sumDailyMetrics(
  knex: Knex,
  organizationId: number,
  metrics: string[],
  from: string,
  to: string,
): Promise<Metrics> {
  const rows: Array<Record<string, unknown>> = await knex('analytics_daily')
    .where('organization_id', organizationId)
    .whereIn('metric', metrics)
    .andWhere('day', '>=', from)
    .andWhere('day', '<=', to)
    .groupBy('metric')
    .select('metric', knex.raw('sum(value) as total'));
  const sums: Metrics = Object.fromEntries(metrics.map((m) => [m, 0]));
  for (const r of rows) sums[String(r.metric)] = toInt(r.total);
  return sums;
}
