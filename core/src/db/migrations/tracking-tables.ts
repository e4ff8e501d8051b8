import type { Knex } from 'knex';

/**
 * Creates knex's tracking and lock tables the way knex does, but safe for runners that meet a fresh
 * database together. knex checks, then creates: two runners both try to create the tables ("table
 * already exists"), and both may insert a lock row, after which no runner can ever take the lock.
 * Once the tables exist, knex finds them and leaves them alone.
 */
export async function ensureTrackingTables(knex: Knex, table: string): Promise<void> {
  await createUnlessPresent(knex, table, (t) => {
    t.increments();
    t.string('name');
    t.integer('batch');
    t.timestamp('migration_time');
  });
  const lockTable = `${table}_lock`;
  await createUnlessPresent(knex, lockTable, (t) => {
    t.increments('index').primary();
    t.integer('is_locked');
  });
  const [{ rows }] = await knex(lockTable).count({ rows: '*' });
  // The fixed key makes two runners' inserts collide rather than leave two lock rows.
  if (Number(rows) === 0) await knex(lockTable).insert({ index: LOCK_ROW, is_locked: 0 }).onConflict('index').ignore();
}

/** The one lock row's key: knex reads the first row and takes the lock only where its UPDATE hits one row. */
const LOCK_ROW = 1;

/**
 * Clears a stale migration lock, leaving exactly one row, unlocked. Not knex's forceFreeMigrationsLock: it
 * deletes the row and inserts another, and a runner waiting meanwhile (ensureTrackingTables) that found the
 * table empty in between inserted its own, after which every runner found two rows and waited in vain.
 * Here the table is never empty, and a second row left by that race (or by knex's own) goes.
 */
export async function clearMigrationLock(knex: Knex, table: string): Promise<void> {
  const lockTable = `${table}_lock`;
  if (!(await knex.schema.hasTable(lockTable))) return;
  await knex(lockTable).insert({ index: LOCK_ROW, is_locked: 0 }).onConflict('index').merge(['is_locked']);
  await knex(lockTable).whereNot('index', LOCK_ROW).del();
}

// Not createTableIfNotExists: knex logs a deprecation warning for it on every call.
async function createUnlessPresent(
  knex: Knex,
  table: string,
  build: (t: Knex.CreateTableBuilder) => void,
): Promise<void> {
  if (await knex.schema.hasTable(table)) return;
  try {
    await knex.schema.createTable(table, build);
  } catch (err) {
    // Another runner created it in between.
    if (!(await knex.schema.hasTable(table))) throw err;
  }
}
