import type { Knex } from 'knex';
import { insertInChunks } from './insert-chunks';

export type StatusDeltas = Partial<Record<string, number>>;

const STATUSES = ['active', 'unconfirmed', 'unsubscribed', 'bounced'];
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
    .insert(STATUSES.map((status) => ({ organization_id: organizationId, status, count: 0 })))
    .onConflict(['organization_id', 'status'])
    .ignore();
  done.add(organizationId);
}

/** Adds to the per-organization status counts inside the caller's transaction (rows made beforehand). */
export async function adjustStatusCounts(trx: Knex.Transaction, organizationId: number, deltas: StatusDeltas): Promise<void> {
  // Sorted, so concurrent transactions take the counter rows in one order.
  for (const [status, delta] of Object.entries(deltas).sort(([a], [b]) => a.localeCompare(b))) {
    if (!delta) continue;
    const updated = await trx('subscriber_counts').where({ organization_id: organizationId, status }).increment('count', delta);
    if (!updated) throw new Error(`status counter row missing for organization ${organizationId}, ${status}: call ensureStatusCountRows first`);
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

export interface ListDelta {
  subscribers: number;
  active: number;
}

/** Inserts the memberships that do not exist yet, leaving the list counters to applyListDeltas. */
export async function insertMemberships(
  trx: Knex.Transaction,
  listId: number,
  members: Array<{ id: number; status: string }>,
  now: Date,
  /** Subscribers created in this transaction: they cannot be members yet, so they are not looked up. */
  created: Set<number> = new Set(),
): Promise<ListDelta> {
  if (!members.length) return { subscribers: 0, active: 0 };
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
  return { subscribers: fresh.length, active: fresh.filter((m) => m.status === 'active').length };
}

/**
 * Adds to list counters, lists in id order so concurrent transactions lock them in one order. Callers
 * apply counters last: the counter rows stay locked only from here to the commit.
 */
export async function applyListDeltas(trx: Knex.Transaction, deltas: Map<number, ListDelta>): Promise<void> {
  for (const listId of [...deltas.keys()].sort((a, b) => a - b)) {
    const { subscribers, active } = deltas.get(listId)!;
    if (!subscribers && !active) continue;
    await trx('lists').where({ id: listId }).update({
      subscriber_count: trx.raw('subscriber_count + ?', [subscribers]),
      active_count: trx.raw('active_count + ?', [active]),
    });
  }
}

/** Adds memberships that do not exist yet; returns how many were added. */
export async function addMemberships(
  trx: Knex.Transaction,
  listId: number,
  members: Array<{ id: number; status: string }>,
  now: Date,
): Promise<number> {
  const delta = await insertMemberships(trx, listId, members, now);
  await applyListDeltas(trx, new Map([[listId, delta]]));
  return delta.subscribers;
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
