import type { Knex } from 'knex';

export interface DirtyReader {
  /** The first column of the first row, as a number. */
  count(sql: string, bindings?: unknown[]): Promise<number>;
  close(): Promise<void>;
}

/**
 * A connection of its own that reads rows not committed yet (READ UNCOMMITTED): what a transaction in
 * flight has written, to kill its process at a known point.
 */
export async function dirtyReader(knex: Knex): Promise<DirtyReader> {
  const connection = await knex.client.acquireConnection();
  const query = (sql: string, bindings: unknown[] = []) =>
    new Promise<Array<Record<string, unknown>>>((resolve, reject) =>
      connection.query(sql, bindings, (error: Error | null, rows: Array<Record<string, unknown>>) =>
        error ? reject(error) : resolve(rows),
      ),
    );
  await query('SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED');
  return {
    count: async (sql, bindings) => Number(Object.values((await query(sql, bindings))[0])[0]),
    close: async () => {
      await query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
      await knex.client.releaseConnection(connection);
    },
  };
}
