/**
 * knex fails at once when another runner holds the migration lock (`MigrationLocked`); SQLite reports a
 * writer in another connection as SQLITE_BUSY. Both mean "someone else is migrating", so wait for them.
 * A SQLITE_BUSY inside a batch is safe to retry too: SQLite rolls the whole batch back, DDL included.
 */
const isContention = (err: unknown) =>
  (err as Error).name === 'MigrationLocked' || (err as { code?: string }).code === 'SQLITE_BUSY';

export async function retryWhileLocked<T>(
  run: () => Promise<T>,
  timeoutMs: number,
  lockedTooLong: (last: Error) => Error,
  waiting?: () => void,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let tries = 0; ; tries++) {
    try {
      return await run();
    } catch (err) {
      if (!isContention(err)) throw err;
      if (tries === 0) waiting?.();
      if (Date.now() >= deadline) throw lockedTooLong(err as Error);
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 150));
    }
  }
}
