import type { Knex } from 'knex';
import { byPrimaryKey } from './dialect';
import { placeholders, writeText } from './statement-text';

/** A piece of a statement's text and the values of its placeholders. */
export interface SqlPiece {
  sql: string;
  values: unknown[];
}

/**
 * An UPDATE's `column = ...`: `value` on the rows whose `key` is one of `ids`, the column as it is on the
 * others; `value` alone when `ids` are all of the statement's `of` rows.
 */
export const setWhereIn = (
  rows: { key: string; ids: number[]; of: number },
  column: string,
  value: unknown,
): SqlPiece =>
  rows.ids.length === rows.of
    ? { sql: `\`${column}\` = ?`, values: [value] }
    : {
        sql: `\`${column}\` = case when \`${rows.key}\` in (${placeholders(rows.ids.length)}) then ? else \`${column}\` end`,
        values: [...rows.ids, value],
      };

/**
 * An UPDATE's `column = column + ...`: each row whose `key` is in `amounts` adds its amount, the others 0;
 * one amount for all `of` rows needs no CASE.
 */
export const addByKey = (key: string, column: string, amounts: ReadonlyMap<number, number>, of: number): SqlPiece => {
  const byAmount = new Map<number, number[]>();
  for (const [id, n] of amounts) (byAmount.get(n) ?? byAmount.set(n, []).get(n)!).push(id);
  if (byAmount.size === 1 && amounts.size === of)
    return { sql: `\`${column}\` = \`${column}\` + ?`, values: [[...byAmount.keys()][0]] };
  const cases = [...byAmount].map(([n, ids]) => ({
    sql: `when \`${key}\` in (${placeholders(ids.length)}) then ?`,
    values: [...ids, n],
  }));
  return {
    sql: `\`${column}\` = \`${column}\` + case ${cases.map((c) => c.sql).join(' ')} else 0 end`,
    values: cases.flatMap((c) => c.values),
  };
};

/**
 * An UPDATE of `table` setting `sets` on the rows `where` names by primary key (byPrimaryKey), as text
 * (writeText): the rows it matched.
 */
export const updateText = (db: Knex | Knex.Transaction, table: string, sets: SqlPiece[], where: SqlPiece) =>
  writeText(db, `update ${byPrimaryKey(db, table)} set ${sets.map((set) => set.sql).join(', ')} where ${where.sql}`, [
    ...sets.flatMap((set) => set.values),
    ...where.values,
  ]);
