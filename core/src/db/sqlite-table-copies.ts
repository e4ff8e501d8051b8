import type { Knex } from 'knex';

/**
 * Runs schema changes that SQLite makes by copying a table (dropping a column): with foreign keys off, or
 * dropping the old table would cascade to every row that references it. SQLite ignores the switch inside a
 * transaction, so a migration that uses this runs outside one (`export const config = { transaction: false }`).
 * Each AUTOINCREMENT table's sequence is kept: a copy restarts it from the highest id left, which would hand
 * the ids of deleted rows out again (and rows that name them without a foreign key would meet a stranger).
 */
export async function withoutSqliteForeignKeys(knex: Knex, changes: () => Promise<void>): Promise<void> {
  if (knex.client.config.client !== 'better-sqlite3') return changes();
  const sequences = await sqliteSequences(knex);
  await knex.raw('PRAGMA foreign_keys = OFF');
  try {
    await changes();
  } finally {
    await knex.raw('PRAGMA foreign_keys = ON');
    await keepSequences(knex, sequences);
  }
}

type Sequences = Array<{ name: string; seq: number }>;

async function sqliteSequences(knex: Knex): Promise<Sequences> {
  if (!(await knex.schema.hasTable('sqlite_sequence'))) return [];
  return (await knex.raw('select `name`, `seq` from `sqlite_sequence`')) as Sequences;
}

/** Each table's sequence back to at least what it was (a table dropped meanwhile stays without one). */
async function keepSequences(knex: Knex, sequences: Sequences): Promise<void> {
  for (const { name, seq } of sequences) {
    if (!(await knex.schema.hasTable(name))) continue;
    const raised = (await knex.raw('update `sqlite_sequence` set `seq` = ? where `name` = ? and `seq` < ?', [
      seq,
      name,
      seq,
    ])) as { changes: number };
    if (raised.changes) continue;
    await knex.raw(
      'insert into `sqlite_sequence` (`name`, `seq`) select ?, ? where not exists (select 1 from `sqlite_sequence` where `name` = ?)',
      [name, seq, name],
    );
  }
}
