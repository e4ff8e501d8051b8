import type { Knex } from 'knex';
import type { Dialect } from './knex';

/** The dialect of a knex, a transaction or a query builder (each carries its client). */
export const dialectOfKnex = (knex: { client: Knex.Client }): Dialect =>
  String(knex.client.config.client).includes('sqlite') ? 'sqlite' : 'mysql';

/**
 * The query reading its rows locked until the transaction ends (`FOR UPDATE`) on MySQL; on SQLite as it
 * is: its one writer at a time is the lock already, and knex warns at `forUpdate` there.
 */
export const lockedOnMysql = <Q extends Knex.QueryBuilder>(query: Q): Q =>
  dialectOfKnex(query) === 'mysql' ? (query.forUpdate() as Q) : query;
