import type { Knex } from 'knex';
import { dialectOfKnex } from './dialect';
import { onDriverConnection } from './driver-connection';

/** `?, ?, ...`: a placeholder for each of `count` values (an IN list); none for none. */
export const placeholders = (count: number): string => (count > 0 ? `?${', ?'.repeat(count - 1)}` : '');

/** `(?, ?), (?, ?)`: the VALUES list of `rows` rows of `columns` values each. */
export const rowPlaceholders = (rows: number, columns: number): string =>
  Array(rows)
    .fill(`(${placeholders(columns)})`)
    .join(', ');

/**
 * For statements many runs a second share, written as SQL text with `?` placeholders that both dialects
 * read (identifiers in backticks, MariaDB's quoting, which SQLite accepts too), or picked by
 * `dialectOfKnex`. On MySQL mysql2 runs them on the transaction's connection (or one from the pool for a
 * plain knex), past knex's builder and per-statement pipeline (what that costs: docs/performance-history.md,
 * ingest, session 23); knex's guard against a statement after the commit is not there, so await each
 * within the transaction's work. On SQLite through `knex.raw`, which converts the values as knex does
 * (dates, booleans).
 */
export async function selectText<T = Record<string, unknown>>(
  db: Knex | Knex.Transaction,
  sql: string,
  values: readonly unknown[],
): Promise<T[]> {
  if (dialectOfKnex(db) === 'mysql') return onDriverConnection(db, (c) => c.query<T[]>(sql, [...values]));
  return (await db.raw(sql, [...values] as Knex.RawBinding[])) as T[];
}

/**
 * A write as SQL text (see selectText): the rows it matched (MySQL's affected rows, which mysql2 asks for
 * as found rows; SQLite's changes).
 */
export async function writeText(db: Knex | Knex.Transaction, sql: string, values: readonly unknown[]): Promise<number> {
  if (dialectOfKnex(db) === 'mysql')
    return (await onDriverConnection(db, (c) => c.query(sql, [...values]))).affectedRows;
  const result = (await db.raw(sql, [...values] as Knex.RawBinding[])) as { changes?: number } | unknown[];
  return Array.isArray(result) ? result.length : (result.changes ?? 0);
}
