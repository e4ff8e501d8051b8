import type { Knex } from 'knex';

type Done = (err: Error | null, result: unknown) => void;
interface MysqlConnection {
  execute(sql: string, values: unknown[], done: Done): void;
  query(sql: string, values: unknown[], done: Done): void;
}

/** What mysql2 answers a write with. */
export interface MysqlWriteResult {
  affectedRows: number;
  insertId: number;
}

/** Statements run by mysql2 itself, past knex's per-statement pipeline (its binding pass, runner, debug). */
export interface DriverConnection {
  /** A prepared statement: mysql2 prepares it once per connection and sends the values binary. */
  execute<T = MysqlWriteResult>(sql: string, values: unknown[]): Promise<T>;
  /** A text statement: mysql2 formats the values into it with the connection's settings (its time zone). */
  query<T = MysqlWriteResult>(sql: string, values: unknown[]): Promise<T>;
}

const promised =
  (connection: MysqlConnection, method: 'execute' | 'query') =>
  <T>(sql: string, values: unknown[]) =>
    new Promise<T>((resolve, reject) =>
      connection[method](sql, values, (err, result) => (err ? reject(err) : resolve(result as T))),
    );

/**
 * MySQL only: runs the work on the transaction's own mysql2 connection, or on one taken from the pool for
 * the whole call. For hot statements whose values knex would only pass through (many rows, many runs a
 * second); their errors are mysql2's own (errno, code), as knex's are.
 */
export async function onDriverConnection<T>(
  trx: Knex | Knex.Transaction,
  work: (connection: DriverConnection) => Promise<T>,
): Promise<T> {
  const client = trx.client as {
    acquireConnection(): Promise<MysqlConnection>;
    releaseConnection(c: MysqlConnection): Promise<unknown>;
  };
  const connection = await client.acquireConnection();
  try {
    return await work({ execute: promised(connection, 'execute'), query: promised(connection, 'query') });
  } finally {
    await client.releaseConnection(connection);
  }
}
