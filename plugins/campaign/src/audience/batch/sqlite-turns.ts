import type { Knex } from 'knex';
import pLimit from 'p-limit';
import { dialectOfKnex } from '@switchboard/core';

const turns = new WeakMap<Knex, ReturnType<typeof pLimit>>();

/**
 * Runs `work` at once on MySQL; on SQLite after the process's other batch imports into this database.
 * SQLite has one writer, so imports at once are no faster; while one import's transaction gives the event
 * loop its turns (core's yielding SQLite client), the others' JavaScript would run in them and keep the one
 * connection idle, slowing every import; waiting here, they leave those turns to other requests (issue 26).
 */
export function inSqliteTurn<T>(knex: Knex, work: () => Promise<T>): Promise<T> {
  if (dialectOfKnex(knex) !== 'sqlite') return work();
  let limit = turns.get(knex);
  if (!limit) turns.set(knex, (limit = pLimit(1)));
  return limit(work);
}
