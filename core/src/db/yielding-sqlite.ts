import type { Knex } from 'knex';

/** At most this long of statements and the code between them before the event loop gets a turn. */
const STRETCH_MS = 10;
/** SQLite's own busy timeout, which blocks the thread: short, the rest of the wait is asynchronous. */
export const SQLITE_BUSY_TIMEOUT_MS = 20;
/** How long a statement waits for another process's write lock in all (then its SQLITE_BUSY is a 503). */
export const DEFAULT_BUSY_WAIT_MS = 10_000;

type QueryingClient = { _query(connection: unknown, query: unknown): Promise<unknown> };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Keeps the event loop free around the statements of a better-sqlite3 knex, transactions included:
 * - it gives the event loop a turn between statements once STRETCH_MS have passed since the last one.
 *   better-sqlite3 runs a statement synchronously and knex chains statements with promises that never let
 *   the event loop run, so a batch import's transaction was one stretch that every other request, /health
 *   included, waited behind (issue 26; the embedded-load benchmark);
 * - a statement meeting another process's write lock (plain SQLITE_BUSY: a command beside `serve`, an
 *   import or a compaction) waits for it asynchronously, up to `busyWaitMs`, and runs again. SQLite's busy
 *   timeout of 5 s blocked the whole process meanwhile, and a transaction's retries made it 25 s (session
 *   29). Inside a transaction the statement failed without effect and the transaction stays open with its
 *   snapshot; if the other process commits first, the next run answers SQLITE_BUSY_SNAPSHOT, which is
 *   thrown for the transaction to run again (transactionWithRetry).
 * The client's class is extended in place: knex makes each transaction's client from
 * `client.constructor.prototype`, and `config.client` stays `better-sqlite3` for the dialect checks.
 */
export function yieldBeforeEachStatement(knex: Knex, busyWaitMs = DEFAULT_BUSY_WAIT_MS): Knex {
  let lastTurn = performance.now();
  const nextTurn = () =>
    new Promise<void>((resolve) =>
      setImmediate(() => {
        lastTurn = performance.now();
        resolve();
      }),
    );
  const Base = knex.client.constructor as new (...args: unknown[]) => QueryingClient;
  class YieldingBetterSqlite extends Base {
    override async _query(connection: unknown, query: unknown): Promise<unknown> {
      if (performance.now() - lastTurn >= STRETCH_MS) await nextTurn();
      const giveUpAt = performance.now() + busyWaitMs;
      for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
        try {
          return await super._query(connection, query);
        } catch (err) {
          if ((err as { code?: string }).code !== 'SQLITE_BUSY' || performance.now() + wait > giveUpAt) throw err;
          await pause(wait);
          lastTurn = performance.now();
        }
      }
    }
  }
  Object.setPrototypeOf(knex.client, YieldingBetterSqlite.prototype);
  return knex;
}
