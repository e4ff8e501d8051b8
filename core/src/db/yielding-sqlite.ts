import type { Knex } from 'knex';

/** At most this long of statements and the code between them before the event loop gets a turn. */
const STRETCH_MS = 10;

type QueryingClient = { _query(connection: unknown, query: unknown): Promise<unknown> };

/**
 * Gives the event loop a turn between the statements of a better-sqlite3 knex, transactions included,
 * once STRETCH_MS have passed since the last one. better-sqlite3 runs a statement synchronously and knex
 * chains statements with promises that never let the event loop run, so a batch import's transaction was
 * one stretch that every other request, /health included, waited behind (issue 26; the embedded-load
 * benchmark). The client's class is extended in place: knex makes each transaction's client from
 * `client.constructor.prototype`, and `config.client` stays `better-sqlite3` for the dialect checks.
 */
export function yieldBeforeEachStatement(knex: Knex): Knex {
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
      return super._query(connection, query);
    }
  }
  Object.setPrototypeOf(knex.client, YieldingBetterSqlite.prototype);
  return knex;
}
