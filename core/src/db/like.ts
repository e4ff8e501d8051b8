import type { Knex } from 'knex';

// '!' escapes LIKE wildcards the same way on SQLite and MySQL (a backslash means different things).
const escapeLike = (s: string) => s.replace(/[!%_]/g, (c) => `!${c}`);

/**
 * Rows where any of `columns` contains `text`, case-insensitively (lower() on both sides: MySQL's
 * binary collations and SQLite's non-ASCII letters would otherwise tell cases apart).
 */
export function whereContains(query: Knex.QueryBuilder, columns: string[], text: string): Knex.QueryBuilder {
  const like = `%${escapeLike(text.toLowerCase())}%`;
  return query.andWhere((w) => {
    for (const column of columns) w.orWhereRaw("lower(??) like ? escape '!'", [column, like]);
  });
}
