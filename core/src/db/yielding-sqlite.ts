import type { Knex } from 'knex';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Gives the event loop a turn before each statement of a better-sqlite3 knex. better-sqlite3 runs a
 * statement synchronously and knex chains statements with promises that never let the event loop run,
 * so one 1,000-row batch import kept every other request, `/health` included, waiting for all of its
 * statements (6 at once: over a second, issue 26). A turn before each statement lets requests that need
 * no database, or the next one queued for it, be answered between two statements of another. The
 * instance's client is wrapped (its `config.client` stays `better-sqlite3`, which dialect checks read).
 */
export function yieldBeforeEachStatement(knex: Knex): Knex {
  const client = knex.client as { _query(connection: unknown, query: unknown): Promise<unknown> };
  const run = client._query.bind(client);
  client._query = async (connection, query) => {
    await nextTurn();
    return run(connection, query);
  };
  return knex;
}
