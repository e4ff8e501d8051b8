import type { Knex } from 'knex';
import { dialectOfKnex } from '@switchboard/core';

/**
 * Runs an UPDATE or INSERT given as its text with placeholders (knex's builder compiles every value of a
 * statement of many rows; measured on the webhook dispatcher's and the inbound events' hot paths) and
 * answers how many rows it changed. Identifiers in backticks: MariaDB's quoting, which SQLite accepts too.
 */
export async function rawWrite(
  knex: Knex | Knex.Transaction,
  sql: string,
  bindings: Knex.RawBinding[],
): Promise<number> {
  const result = await knex.raw(sql, bindings);
  return dialectOfKnex(knex) === 'mysql'
    ? (result as [{ affectedRows: number }])[0].affectedRows
    : (result as { changes: number }).changes;
}

/** `?, ?, ...`: a placeholder for each of `count` values (an IN list); none for none. */
export const placeholders = (count: number): string => (count > 0 ? `?${', ?'.repeat(count - 1)}` : '');
