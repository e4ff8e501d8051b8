import { format } from 'mysql2';

type SqlValue = Parameters<typeof format>[1];
import type { Knex } from 'knex';
import { dialectOfKnex } from './dialect';

export interface InsertRowsOptions {
  /** Skip rows whose key exists already (INSERT IGNORE / ON CONFLICT DO NOTHING). */
  ignoreExisting?: boolean;
}

/** SQLite takes at most ~32k bound values a statement; MySQL a 16 MB packet, far above this many rows. */
const MYSQL_ROWS_PER_STATEMENT = 2000;
const SQLITE_VALUES_PER_STATEMENT = 30_000;

/**
 * Multi-row inserts of many rows (all with the keys of the first) in as few statements as the
 * database takes. On MySQL the statement is written by mysql2's own escaping and handed to knex as
 * finished SQL: knex's builder and binding pass cost more CPU than the database spends on the rows.
 * Returns the id the driver reports for each statement (see insertRowsReturningIds).
 */
export async function insertRows(trx: Knex | Knex.Transaction, table: string, rows: Record<string, unknown>[], options: InsertRowsOptions = {}): Promise<number[]> {
  if (!rows.length) return [];
  const columns = Object.keys(rows[0]);
  const reported: number[] = [];
  if (dialectOfKnex(trx) === 'mysql') {
    for (let i = 0; i < rows.length; i += MYSQL_ROWS_PER_STATEMENT) {
      const values = rows.slice(i, i + MYSQL_ROWS_PER_STATEMENT).map((row) => columns.map((c) => (row[c] ?? null) as SqlValue));
      const sql = format(`INSERT ${options.ignoreExisting ? 'IGNORE ' : ''}INTO ?? (??) VALUES ?`, [table, columns, values], false, 'Z');
      reported.push((await queryDirect(trx, sql)).insertId);
    }
    return reported;
  }
  const perStatement = Math.max(1, Math.min(400, Math.floor(SQLITE_VALUES_PER_STATEMENT / columns.length)));
  for (let i = 0; i < rows.length; i += perStatement) {
    const insert = trx(table).insert(rows.slice(i, i + perStatement));
    const [id] = (await (options.ignoreExisting ? insert.onConflict().ignore() : insert)) as number[];
    reported.push(Number(id));
  }
  return reported;
}

interface MysqlConnection {
  query(sql: string, callback: (err: Error | null, result: { insertId: number }) => void): void;
}

/**
 * Runs finished SQL on the connection of the transaction (or one from the pool) through mysql2 itself:
 * knex's query pipeline rescans every statement (its debug formatting runs a regex over the whole SQL
 * even with debugging off), a cost that counts on statements of a few hundred kilobytes.
 */
async function queryDirect(trx: Knex | Knex.Transaction, sql: string): Promise<{ insertId: number }> {
  const client = trx.client as { acquireConnection(): Promise<MysqlConnection>; releaseConnection(c: MysqlConnection): Promise<unknown> };
  const connection = await client.acquireConnection();
  try {
    return await new Promise((resolve, reject) => connection.query(sql, (err, result) => (err ? reject(err) : resolve(result))));
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * Inserts rows into a table with an auto-increment `id` and returns their ids in row order, without
 * reading them back when the database numbered each statement's rows consecutively (MySQL reports
 * the first id of a multi-row insert, SQLite the last). That is checked, not assumed: the rows at
 * both ends must carry the expected values of `uniqueColumn`; otherwise the ids are looked up.
 */
export async function insertRowsReturningIds(
  trx: Knex | Knex.Transaction,
  table: string,
  rows: Record<string, unknown>[],
  lookup: { uniqueColumn: string; scope: Record<string, unknown> },
): Promise<number[]> {
  if (!rows.length) return [];
  const reported = await insertRows(trx, table, rows);
  const perStatement = Math.ceil(rows.length / reported.length);
  const reportsFirst = dialectOfKnex(trx) === 'mysql';
  const ids: number[] = [];
  const ends: number[] = [];
  reported.forEach((id, s) => {
    const count = Math.min(perStatement, rows.length - s * perStatement);
    const first = reportsFirst ? id : id - count + 1;
    ends.push(ids.length, ids.length + count - 1);
    for (let i = 0; i < count; i++) ids.push(first + i);
  });
  const { uniqueColumn, scope } = lookup;
  const found = new Map(
    ((await trx(table).whereIn('id', ends.map((i) => ids[i])).select('id', uniqueColumn)) as Record<string, unknown>[]).map((r) => [Number(r.id), r[uniqueColumn]]),
  );
  if (ends.every((i) => found.get(ids[i]) === rows[i][uniqueColumn])) return ids;
  const byValue = new Map(
    ((await trx(table).where(scope).whereIn(uniqueColumn, rows.map((r) => r[uniqueColumn] as string)).select('id', uniqueColumn)) as Record<string, unknown>[]).map((r) => [r[uniqueColumn], Number(r.id)]),
  );
  return rows.map((r) => byValue.get(r[uniqueColumn])!);
}
