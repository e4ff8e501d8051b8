import type { Knex } from 'knex';

/**
 * Runs schema changes that SQLite makes by copying a table (dropping a column): with foreign keys off, or
 * dropping the old table would cascade to every row that references it. SQLite ignores the switch inside a
 * transaction, so a migration that uses this runs outside one (`export const config = { transaction: false }`).
 */
export async function withoutSqliteForeignKeys(knex: Knex, changes: () => Promise<void>): Promise<void> {
  const sqlite = knex.client.config.client === 'better-sqlite3';
  if (sqlite) await knex.raw('PRAGMA foreign_keys = OFF');
  try {
    await changes();
  } finally {
    if (sqlite) await knex.raw('PRAGMA foreign_keys = ON');
  }
}
