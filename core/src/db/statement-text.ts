import type { Knex } from 'knex';
import { dialectOfKnex } from './dialect';
import { onDriverConnection } from './driver-connection';

/** `?, ?, ...`: a placeholder for each of `count` values (an IN list); none for none. */
export const placeholders = (count: number): string => (count > 0 ? `?${', ?'.repeat(count - 1)}` : '');

/**
 * For statements many runs a second share (the inbound events' run: ~9 statements for ~8 requests), written
 * as SQL text with `?` placeholders that both dialects read (identifiers in backticks, MariaDB's quoting,
 * which SQLite accepts too), or picked by `dialectOfKnex`. On MySQL they
 * run by mysql2 on the transaction's own connection, past knex's builder and per-statement pipeline: ~70 µs
 * of CPU a statement less, measured (docs/performance-history.md, ingest, session 23). On SQLite through
 * `knex.raw`, which converts the values as knex does (dates, booleans).
 */
export async function selectText<T = Record<string, unknown>>(
  db: Knex | Knex.Transaction,
  sql: string,
  values: readonly unknown[],
): Promise<T[]> {
  if (dialectOfKnex(db) === 'mysql') return onDriverConnection(db, (c) => c.query<T[]>(sql, [...values]));
  return (await db.raw(sql, [...values] as Knex.RawBinding[])) as T[];
}

/** A write as SQL text (see selectText): how many rows it changed (MySQL's affected rows, SQLite's changes). */
export async function writeText(db: Knex | Knex.Transaction, sql: string, values: readonly unknown[]): Promise<number> {
  if (dialectOfKnex(db) === 'mysql')
    return (await onDriverConnection(db, (c) => c.query(sql, [...values]))).affectedRows;
  const result = (await db.raw(sql, [...values] as Knex.RawBinding[])) as { changes?: number } | unknown[];
  return Array.isArray(result) ? result.length : (result.changes ?? 0);
}
