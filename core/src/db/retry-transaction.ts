import type { Knex } from 'knex';

/**
 * Thrown by work that found another transaction changed what it had read (an UPDATE changed fewer rows than
 * it counted on): its transaction is rolled back and run again, as for a deadlock.
 */
export class WriteConflict extends Error {}

/**
 * SQLite's answers to a transaction that read, then could not write (another connection wrote meanwhile).
 * A plain SQLITE_BUSY is not among them: it reaches here only once a statement waited for another
 * process's write lock in vain (yielding-sqlite.ts), and running the transaction again would wait as long.
 */
const SQLITE_BUSY = new Set(['SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY']);

/**
 * MySQL deadlock or lock-wait timeout, SQLite busy (a deferred transaction that read and then could not
 * write: SQLite answers SQLITE_BUSY_SNAPSHOT at once, since waiting could not help), or a
 * WriteConflict: the transaction was rolled back and may simply run again.
 */
export function isRetryableConflict(err: unknown): boolean {
  if (err instanceof WriteConflict) return true;
  const e = err as { errno?: number; code?: string };
  return (
    e.errno === 1213 ||
    e.errno === 1205 ||
    e.code === 'ER_LOCK_DEADLOCK' ||
    e.code === 'ER_LOCK_WAIT_TIMEOUT' ||
    (e.code !== undefined && SQLITE_BUSY.has(e.code))
  );
}

/**
 * Runs the work in a transaction, again (up to `attempts` times, after a short random pause) when
 * the database rolled it back for a deadlock, as InnoDB asks callers to do, or the work met a WriteConflict.
 */
export async function transactionWithRetry<T>(
  knex: Knex,
  work: (trx: Knex.Transaction) => Promise<T>,
  attempts = 5,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await knex.transaction(work);
    } catch (err) {
      if (!isRetryableConflict(err) || attempt >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
    }
  }
}
