import type { Knex } from 'knex';
import { insertInChunks } from './insert-chunks';

export type StatusDeltas = Partial<Record<string, number>>;

/** Adds to the per-organization status counts inside the caller's transaction. */
export async function adjustStatusCounts(trx: Knex.Transaction, organizationId: number, deltas: StatusDeltas): Promise<void> {
  // Sorted, so concurrent transactions take the counter rows in one order and cannot deadlock on them.
  for (const [status, delta] of Object.entries(deltas).sort(([a], [b]) => a.localeCompare(b))) {
    if (!delta) continue;
    const updated = await trx('subscriber_counts').where({ organization_id: organizationId, status }).increment('count', delta);
    if (updated) continue;
    await trx('subscriber_counts').insert({ organization_id: organizationId, status, count: 0 }).onConflict(['organization_id', 'status']).ignore();
    await trx('subscriber_counts').where({ organization_id: organizationId, status }).increment('count', delta);
  }
}

export async function statusCount(knex: Knex, organizationId: number, status: string): Promise<number> {
  const row = await knex('subscriber_counts').where({ organization_id: organizationId, status }).first('count');
  return Number(row?.count ?? 0);
}

/**
 * Moves the status copies (memberships, meta and search words) to a new status and keeps each
 * list's active_count right.
 */
export async function moveMembershipStatus(trx: Knex.Transaction, subscriberId: number, from: string, to: string): Promise<void> {
  if (from === to) return;
  await trx('subscriber_meta').where({ subscriber_id: subscriberId }).update({ subscriber_status: to });
  await trx('subscriber_tokens').where({ subscriber_id: subscriberId }).update({ subscriber_status: to });
  const listIds = (await trx('list_subscribers').where({ subscriber_id: subscriberId }).pluck('list_id')) as number[];
  if (!listIds.length) return;
  await trx('list_subscribers').where({ subscriber_id: subscriberId }).update({ subscriber_status: to });
  if (from === 'active') await trx('lists').whereIn('id', listIds).decrement('active_count', 1);
  if (to === 'active') await trx('lists').whereIn('id', listIds).increment('active_count', 1);
}

/** Adds memberships that do not exist yet; returns how many were added. */
export async function addMemberships(
  trx: Knex.Transaction,
  listId: number,
  members: Array<{ id: number; status: string }>,
  now: Date,
  /** Subscribers created in this transaction: they cannot be members yet, so they are not looked up. */
  created: Set<number> = new Set(),
): Promise<number> {
  if (!members.length) return 0;
  const lookup = members.filter((m) => !created.has(m.id)).map((m) => m.id);
  const existing = new Set(
    lookup.length ? ((await trx('list_subscribers').where({ list_id: listId }).whereIn('subscriber_id', lookup).pluck('subscriber_id')) as number[]).map(Number) : [],
  );
  const fresh = members.filter((m) => !existing.has(m.id));
  await insertInChunks(
    trx,
    'list_subscribers',
    fresh.map((m) => ({ list_id: listId, subscriber_id: m.id, subscriber_status: m.status, created_at: now })),
  );
  const active = fresh.filter((m) => m.status === 'active').length;
  if (fresh.length) {
    await trx('lists').where({ id: listId }).update({
      subscriber_count: trx.raw('subscriber_count + ?', [fresh.length]),
      active_count: trx.raw('active_count + ?', [active]),
    });
  }
  return fresh.length;
}

/** Removes memberships; returns how many there were. */
export async function removeMemberships(trx: Knex.Transaction, listId: number, subscriberIds: number[]): Promise<number> {
  if (!subscriberIds.length) return 0;
  const rows = await trx('list_subscribers').where({ list_id: listId }).whereIn('subscriber_id', subscriberIds).select('subscriber_status');
  if (!rows.length) return 0;
  await trx('list_subscribers').where({ list_id: listId }).whereIn('subscriber_id', subscriberIds).delete();
  const active = rows.filter((r: { subscriber_status: string }) => r.subscriber_status === 'active').length;
  await trx('lists').where({ id: listId }).update({
    subscriber_count: trx.raw('subscriber_count - ?', [rows.length]),
    active_count: trx.raw('active_count - ?', [active]),
  });
  return rows.length;
}
