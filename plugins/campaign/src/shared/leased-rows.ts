import type { Knex } from 'knex';
import { isRetryableConflict, type LockHandle, placeholders, writeText } from '@switchboard/core';

/**
 * Keeps a run's lock: extended every third of its time. `held()` turns false once an extension fails,
 * after which another run may hold the lock and this one must take nothing more.
 */
export function keepLock(lock: LockHandle, ttlMs: number): { held(): boolean; stop(): void } {
  let held = true;
  const timer = setInterval(() => {
    lock.extend(ttlMs).then(
      (extended) => (held &&= extended),
      () => (held = false),
    );
  }, ttlMs / 3);
  return { held: () => held, stop: () => clearInterval(timer) };
}

/**
 * Claims pending rows (`state`, `next_attempt_at`) that are still due by moving their due time to a lease
 * of this run's own (jittered, so two runs' leases differ): a row is never taken by two runs, and one
 * whose run died is due again after the lease. The ids this run claimed.
 */
export async function claimDue(
  knex: Knex,
  table: string,
  ids: number[],
  now: Date,
  leaseMs: number,
): Promise<Set<number>> {
  const lease = new Date(now.getTime() + leaseMs + Math.floor(Math.random() * 1_000));
  const sql =
    `update \`${table}\` set \`next_attempt_at\` = ? ` +
    `where \`id\` in (${placeholders(ids.length)}) and \`state\` = 'pending' and \`next_attempt_at\` <= ?`;
  let claimed: number;
  for (let attempt = 1; ; attempt++) {
    try {
      claimed = await writeText(knex, sql, [lease, ...ids, now]);
      break;
    } catch (err) {
      // A deadlock with an outcome write running beside the claim rolled this statement back alone.
      if (!isRetryableConflict(err) || attempt >= 3) throw err;
    }
  }
  if (claimed === ids.length) return new Set(ids);
  return new Set((await knex(table).whereIn('id', ids).andWhere('next_attempt_at', lease).pluck('id')).map(Number));
}
