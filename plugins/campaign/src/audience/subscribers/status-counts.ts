import type { Knex } from 'knex';
import { SUBSCRIBER_STATUSES } from '../../shared/subscriber-statuses';
import { addDailyMetrics, dayOf } from '../../daily-figures';
import { SubscriberChange, subscriberMetrics } from '../../daily-figures';

export type StatusDeltas = Partial<Record<string, number>>;

/** Per database (knex instance): organizations whose counter rows exist. */
const prepared = new WeakMap<Knex, Set<number>>();

/**
 * Creates the organization's counter rows, outside any transaction: creating them inside concurrent
 * transactions (update finds nothing, then insert) deadlocks on InnoDB's gap locks.
 */
export async function ensureStatusCountRows(knex: Knex, organizationId: number): Promise<void> {
  const done = prepared.get(knex) ?? prepared.set(knex, new Set()).get(knex)!;
  if (done.has(organizationId)) return;
  await knex('subscriber_counts')
    .insert(SUBSCRIBER_STATUSES.map((status) => ({ organization_id: organizationId, status, count: 0 })))
    .onConflict(['organization_id', 'status'])
    .ignore();
  done.add(organizationId);
}

/**
 * Adds to the per-organization status counts inside the caller's transaction (rows made beforehand),
 * and to the day's analytics figures: what kind of change it was decides what they count.
 */
export async function adjustStatusCounts(
  trx: Knex.Transaction,
  organizationId: number,
  deltas: StatusDeltas,
  change: { kind: SubscriberChange; at: Date },
): Promise<void> {
  // Sorted, so concurrent transactions take the counter rows in one order.
  for (const [status, delta] of Object.entries(deltas).sort(([a], [b]) => a.localeCompare(b))) {
    if (!delta) continue;
    const updated = await trx('subscriber_counts')
      .where({ organization_id: organizationId, status })
      .increment('count', delta);
    if (!updated)
      throw new Error(
        `status counter row missing for organization ${organizationId}, ${status}: call ensureStatusCountRows first`,
      );
  }
  await addDailyMetrics(trx, organizationId, dayOf(change.at), subscriberMetrics(change.kind, deltas));
}

export async function statusCount(knex: Knex, organizationId: number, status: string): Promise<number> {
  const row = await knex('subscriber_counts').where({ organization_id: organizationId, status }).first('count');
  return Number(row?.count ?? 0);
}
