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

/**
 * A table as a statement naming its rows by primary key reads it (SQL text, or `knex.raw` for the builder):
 * on MySQL with FORCE INDEX (PRIMARY). MariaDB's optimizer scans a small table whole rather than look its
 * keys up, and an UPDATE or locking read locks every row it scans (REPEATABLE READ): two sends' records, or
 * two ledgers' counters, then wait on and deadlock over rows neither needs (docs/reliability.md, sends at once).
 */
export const byPrimaryKey = (db: { client: Knex.Client }, table: string, alias?: string): string =>
  `\`${table}\`${alias ? ` as \`${alias}\`` : ''}${dialectOfKnex(db) === 'mysql' ? ' force index (primary)' : ''}`;
