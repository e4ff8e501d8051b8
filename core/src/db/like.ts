import type { Knex } from 'knex';
import { foldText } from '../fold-text';
import { dialectOfKnex } from './dialect';
import { SQLITE_FOLD } from './knex';

// '!' escapes LIKE wildcards the same way on SQLite and MySQL (a backslash means different things).
const escapeLike = (s: string) => s.replace(/[!%_]/g, (c) => `!${c}`);

/**
 * Rows where any of `columns` contains `text`, folded as searches compare it (foldText: case and accents;
 * `jose` finds José on both backends). On SQLite both sides are folded by foldText, and compared by
 * `instr`, which reads past a NUL where LIKE stopped (a search of `\0nomatch` matched every row). On
 * MySQL the text loses its accents and the column is compared lower-cased through its collation, which
 * folds accents with utf8mb4's default collations (utf8mb4_general_ci).
 */
export function whereContains(query: Knex.QueryBuilder, columns: string[], text: string): Knex.QueryBuilder {
  const sqlite = dialectOfKnex(query) === 'sqlite';
  const [sql, value] = sqlite
    ? [`instr(${SQLITE_FOLD}(??), ?) > 0`, foldText(text)]
    : [`lower(??) like ? escape '!'`, `%${escapeLike(withoutMarks(text))}%`];
  return query.andWhere((w) => {
    for (const column of columns) w.orWhereRaw(sql, [column, value]);
  });
}

/**
 * MySQL's side: accents dropped and lower-cased, one character for one, as its LIKE compares the column
 * character by character (foldText's `ß` as `ss` no longer found Straße there).
 */
const withoutMarks = (text: string) => text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
