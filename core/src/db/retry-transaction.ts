import type { Knex } from 'knex';

/** MySQL deadlock or lock-wait timeout: the transaction was rolled back and may simply run again. */
export function isRetryableConflict(err: unknown): boolean {
  const e = err as { errno?: number; code?: string };
  return e.errno === 1213 || e.errno === 1205 || e.code === 'ER_LOCK_DEADLOCK' || e.code === 'ER_LOCK_WAIT_TIMEOUT';
}

/**
 * Runs the work in a transaction, again (up to `attempts` times, after a short random pause) when
 * the database rolled it back for a deadlock, as InnoDB asks callers to do.
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
