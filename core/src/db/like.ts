import type { Knex } from 'knex';
import { dialectOfKnex } from './dialect';
import { SQLITE_LOWER } from './knex';

// '!' escapes LIKE wildcards the same way on SQLite and MySQL (a backslash means different things).
const escapeLike = (s: string) => s.replace(/[!%_]/g, (c) => `!${c}`);

/**
 * Rows where any of `columns` contains `text`, case-insensitively (lower-cased on both sides: MySQL's
 * binary collations would otherwise tell cases apart; on SQLite with its own function, as SQLite's
 * lower() and LIKE fold ASCII letters only, and `Élo` never met `élo`).
 */
export function whereContains(query: Knex.QueryBuilder, columns: string[], text: string): Knex.QueryBuilder {
  const like = `%${escapeLike(text.toLowerCase())}%`;
  const lower = dialectOfKnex(query) === 'sqlite' ? SQLITE_LOWER : 'lower';
  return query.andWhere((w) => {
    for (const column of columns) w.orWhereRaw(`${lower}(??) like ? escape '!'`, [column, like]);
  });
}
