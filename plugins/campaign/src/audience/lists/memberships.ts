import type { Knex } from 'knex';
import { AppError, byPrimaryKey, insertRows, lockedOnMysql } from '@switchboard/core';
import { appendMembershipRows } from '../search';

/** Moves the status copies in memberships to a new status and keeps each list's active_count right. */
export async function moveMembershipStatus(
  trx: Knex.Transaction,
  subscriberId: number,
  from: string,
  to: string,
): Promise<void> {
  if (from === to) return;
  const listIds = (await trx('list_subscribers').where({ subscriber_id: subscriberId }).pluck('list_id')).map(Number);
  if (!listIds.length) return;
  await trx('list_subscribers').where({ subscriber_id: subscriberId }).update({ subscriber_status: to });
  if (from === 'active') await trx('lists').whereIn('id', listIds).decrement('active_count', 1);
  if (to === 'active') await trx('lists').whereIn('id', listIds).increment('active_count', 1);
}

export interface ListDelta {
  subscribers: number;
  active: number;
}

/** The delta of a list in `deltas`, made at zero when missing. */
export const deltaOf = (deltas: Map<number, ListDelta>, listId: number): ListDelta =>
  deltas.get(listId) ?? deltas.set(listId, { subscribers: 0, active: 0 }).get(listId)!;

export interface Membership {
  listId: number;
  id: number;
  status: string;
}

/**
 * Inserts the memberships that do not exist yet in one statement, in primary-key order, adds them to
 * the substring index, and returns what they add to each list's counters (for applyListDeltas).
 */
export async function insertMemberships(
  trx: Knex.Transaction,
  organizationId: number,
  memberships: Membership[],
  now: Date,
  /** Subscribers created in this transaction: they cannot be members yet, so they are not looked up. */
  created: Set<number> = new Set(),
): Promise<Map<number, ListDelta>> {
  const lookup = [...new Set(memberships.filter((m) => !created.has(m.id)).map((m) => m.id))];
  // Read locked on MariaDB: a plain read sees the transaction's snapshot, which may predate a membership
  // another request committed since (a batch import adding lists while a list's add ran: a duplicate key, a
  // 500 and the chunk lost; session 34). A locking read sees the latest rows; by the primary key
  // (subscriber_id, list_id), so that it locks those subscribers' memberships alone.
  const existing = new Set(
    lookup.length
      ? (
          (await lockedOnMysql(
            trx(trx.raw(byPrimaryKey(trx, 'list_subscribers')))
              .whereIn('subscriber_id', lookup)
              .select('list_id', 'subscriber_id'),
          )) as Array<{ list_id: number; subscriber_id: number }>
        ).map((r) => `${r.list_id}:${r.subscriber_id}`)
      : [],
  );
  const fresh = memberships
    .filter((m) => !existing.has(`${m.listId}:${m.id}`))
    .sort((a, b) => a.id - b.id || a.listId - b.listId);
  await insertRows(
    trx,
    'list_subscribers',
    fresh.map((m) => ({ list_id: m.listId, subscriber_id: m.id, subscriber_status: m.status, created_at: now })),
  );
  await appendMembershipRows(trx, organizationId, fresh);
  const deltas = new Map<number, ListDelta>();
  for (const m of fresh) {
    const delta = deltaOf(deltas, m.listId);
    delta.subscribers += 1;
    if (m.status === 'active') delta.active += 1;
  }
  return deltas;
}

/**
 * Lists deleted while members were added to them (a 422 `lists` / `exists`, as if they had been gone when
 * the request came): the transaction that added them rolls back, leaving no membership of a deleted list.
 */
export class ListsGone extends AppError {
  constructor(readonly ids: number[]) {
    super('VALIDATION_ERROR', `List ${ids[0]} does not exist`, { field: 'lists', rule: 'exists' });
  }
}

/**
 * Adds to list counters in one statement; it locks the list rows in id order, the same order in every
 * concurrent transaction. Callers apply counters last: the rows stay locked only from here to the commit.
 * A list that gained members and is no longer there was deleted since the caller checked it: ListsGone.
 */
export async function applyListDeltas(trx: Knex.Transaction, deltas: Map<number, ListDelta>): Promise<void> {
  const changed = [...deltas].filter(([, d]) => d.subscribers || d.active);
  if (!changed.length) return;
  const byId = (pick: (d: ListDelta) => number) =>
    trx.raw(
      `CASE id ${changed.map(() => 'WHEN ? THEN ?').join(' ')} ELSE 0 END`,
      changed.flatMap(([id, d]) => [id, pick(d)]),
    );
  const updated = Number(
    await trx('lists')
      .whereIn(
        'id',
        changed.map(([id]) => id),
      )
      .update({
        subscriber_count: trx.raw('subscriber_count + ?', [byId((d) => d.subscribers)]),
        active_count: trx.raw('active_count + ?', [byId((d) => d.active)]),
      }),
  );
  if (updated === changed.length) return;
  const joined = changed.filter(([, d]) => d.subscribers > 0).map(([id]) => id);
  const kept = new Set((await trx('lists').whereIn('id', joined).pluck('id')).map(Number));
  const gone = joined.filter((id) => !kept.has(id));
  if (gone.length) throw new ListsGone(gone);
}

/** Adds memberships that do not exist yet; returns how many were added. */
export async function addMemberships(
  trx: Knex.Transaction,
  organizationId: number,
  listId: number,
  members: Array<{ id: number; status: string }>,
  now: Date,
): Promise<number> {
  const deltas = await insertMemberships(
    trx,
    organizationId,
    members.map((m) => ({ listId, ...m })),
    now,
  );
  await applyListDeltas(trx, deltas);
  return deltas.get(listId)?.subscribers ?? 0;
}

/**
 * Deletes memberships and returns what that takes off each list's counters (for applyListDeltas),
 * counted from the rows actually deleted, per list and status.
 */
export async function deleteMemberships(
  trx: Knex.Transaction,
  memberships: Membership[],
): Promise<Map<number, ListDelta>> {
  const groups = new Map<string, { listId: number; status: string; ids: number[] }>();
  for (const m of memberships) {
    const key = `${m.listId}:${m.status}`;
    (groups.get(key) ?? groups.set(key, { listId: m.listId, status: m.status, ids: [] }).get(key)!).ids.push(m.id);
  }
  const deltas = new Map<number, ListDelta>();
  for (const { listId, status, ids } of groups.values()) {
    const gone = Number(
      await trx('list_subscribers')
        .where({ list_id: listId, subscriber_status: status })
        .whereIn('subscriber_id', ids)
        .delete(),
    );
    const delta = deltaOf(deltas, listId);
    delta.subscribers -= gone;
    if (status === 'active') delta.active -= gone;
  }
  return deltas;
}

type MembershipRow = { list_id: number; subscriber_id: number; subscriber_status: string };
const MEMBERSHIP_COLUMNS = ['list_id', 'subscriber_id', 'subscriber_status'];
const toMembership = (r: MembershipRow): Membership => ({
  listId: Number(r.list_id),
  id: Number(r.subscriber_id),
  status: r.subscriber_status,
});

/** Removes every membership of these subscribers and takes them off their lists' counters. */
export async function removeAllMemberships(trx: Knex.Transaction, subscriberIds: number[]): Promise<void> {
  const rows = (await trx('list_subscribers')
    .whereIn('subscriber_id', subscriberIds)
    .select(MEMBERSHIP_COLUMNS)) as MembershipRow[];
  await applyListDeltas(trx, await deleteMemberships(trx, rows.map(toMembership)));
}

/** Removes memberships of one list; returns how many there were. */
export async function removeMemberships(
  trx: Knex.Transaction,
  listId: number,
  subscriberIds: number[],
): Promise<number> {
  if (!subscriberIds.length) return 0;
  const rows = (await trx('list_subscribers')
    .where({ list_id: listId })
    .whereIn('subscriber_id', subscriberIds)
    .select(MEMBERSHIP_COLUMNS)) as MembershipRow[];
  const deltas = await deleteMemberships(trx, rows.map(toMembership));
  await applyListDeltas(trx, deltas);
  return -(deltas.get(listId)?.subscribers ?? 0);
}
