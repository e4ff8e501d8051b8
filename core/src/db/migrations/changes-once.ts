import type { Knex } from 'knex';
import { dialectOfKnex } from '../dialect';

/**
 * Schema changes a migration can run again after a runner was killed part-way through it. On MySQL/MariaDB each
 * statement commits on its own, and knex writes one change as several (a CREATE TABLE, then an ALTER TABLE per
 * index and foreign key; a column's ALTER, then its index's), so a killed run leaves some of them done; on
 * SQLite so does a migration outside a transaction. Each statement knex would run is run only if what it adds
 * is not there yet, or what it drops still is; a statement of any other kind runs as it is.
 */
export async function createTableOnce(
  knex: Knex,
  table: string,
  build: (t: Knex.CreateTableBuilder) => void,
): Promise<void> {
  if (!(await knex.schema.hasTable(table))) return knex.schema.createTable(table, build);
  await runMissing(knex, knex.schema.createTable(table, build).toSQL().slice(1));
}

/** An ALTER TABLE, as createTableOnce. */
export async function alterTableOnce(
  knex: Knex,
  table: string,
  change: (t: Knex.AlterTableBuilder) => void,
): Promise<void> {
  const statements = knex.schema.alterTable(table, change).toSQL();
  // SQLite drops and alters columns by copying the table, which knex runs itself (statementsProducer).
  if (statements.some((s) => /^pragma\b/i.test(s.sql.trim()))) return knex.schema.alterTable(table, change);
  await runMissing(knex, statements);
}

/**
 * Drops the columns the table still has. SQLite drops each in place (ALTER TABLE ... DROP COLUMN, SQLite
 * 3.35+): knex's way copies the table, which restarts its AUTOINCREMENT sequence from the highest id left,
 * and a run killed after the copy but before core's withoutSqliteForeignKeys put the sequence back would hand
 * deleted rows' ids out again (session 32's review). In place needs columns no index, key or constraint names.
 */
export async function dropColumnsOnce(knex: Knex, table: string, columns: string[]): Promise<void> {
  const left: string[] = [];
  for (const column of columns) if (await knex.schema.hasColumn(table, column)) left.push(column);
  if (!left.length) return;
  if (dialectOfKnex(knex) !== 'sqlite') return alterTableOnce(knex, table, (t) => t.dropColumns(...left));
  for (const column of left) await knex.raw('ALTER TABLE ?? DROP COLUMN ??', [table, column]);
}

async function runMissing(knex: Knex, statements: Array<{ sql: string; bindings?: readonly unknown[] }>) {
  for (const { sql, bindings } of statements) {
    if (await done(knex, sql)) continue;
    // Without bindings, as knex's schema runner sends it: a `?` in a literal (a default) stays text.
    await (bindings?.length ? knex.raw(sql, bindings as Knex.RawBinding[]) : knex.raw(sql));
  }
}

// knex quotes every name it writes.
const ID = '[`"](\\w+)[`"]';
const ALTER = new RegExp(`^alter table ${ID} (.*)$`, 'is');
const ADD_INDEX = new RegExp(`^add (?:index|unique) ${ID}`, 'i');
// SQLite's DROP INDEX is a statement of its own, MySQL's a part of an ALTER TABLE.
const DROP_INDEX = new RegExp(`^drop index ${ID}`, 'i');
const ADD_CONSTRAINT = new RegExp(`^add constraint ${ID}( foreign key)?`, 'i');
const DROP_CONSTRAINT = new RegExp(`^drop (foreign key|constraint) ${ID}`, 'i');
const ADD_COLUMNS = new RegExp(`(?:^|, )add (?:column )?${ID}`, 'gi');
const DROP_COLUMNS = new RegExp(`(?:^|, )drop (?:column )?${ID}`, 'gi');
const CREATE_INDEX = new RegExp(`^create (?:unique )?index ${ID} on ${ID}`, 'i');

/** Whether what the statement changes is already so (false when it cannot tell: then it runs). */
async function done(knex: Knex, sql: string): Promise<boolean> {
  const created = CREATE_INDEX.exec(sql);
  if (created) return hasIndex(knex, created[2], created[1]);
  const droppedIndex = DROP_INDEX.exec(sql);
  if (droppedIndex && dialectOfKnex(knex) === 'sqlite') return !(await hasSqliteIndex(knex, droppedIndex[1]));
  const alter = ALTER.exec(sql);
  if (!alter) return false;
  const [, table, rest] = alter;
  // MySQL keeps the index it made for a foreign key after the key is dropped, under the key's name: an index
  // and a foreign key are looked up each as what they are.
  const match = (re: RegExp) => re.exec(rest)?.[1];
  let name: string | undefined;
  if ((name = match(ADD_INDEX))) return hasIndex(knex, table, name);
  if ((name = match(DROP_INDEX))) return !(await hasIndex(knex, table, name));
  // Named constraints are MySQL's (SQLite's foreign keys are part of the table, changed by copying it).
  if (dialectOfKnex(knex) === 'mysql') {
    const added = ADD_CONSTRAINT.exec(rest);
    if (added) return hasConstraint(knex, table, added[1], added[2] ? 'FOREIGN KEY' : undefined);
    const dropped = DROP_CONSTRAINT.exec(rest);
    if (dropped)
      return !(await hasConstraint(knex, table, dropped[2], /foreign/i.test(dropped[1]) ? 'FOREIGN KEY' : undefined));
  }
  // One ALTER TABLE adding or dropping columns is atomic: all of them are there, or none.
  const adds = [...rest.matchAll(ADD_COLUMNS)].map((m) => m[1]);
  if (adds.length && adds.length === rest.split(/, add /i).length) return knex.schema.hasColumn(table, adds[0]);
  const drops = [...rest.matchAll(DROP_COLUMNS)].map((m) => m[1]);
  if (drops.length && drops.length === rest.split(/, drop /i).length)
    return !(await knex.schema.hasColumn(table, drops[0]));
  return false;
}

/** Whether the table has an index or unique key of that name (on SQLite: an index of that name). */
export async function hasIndex(knex: Knex, table: string, name: string): Promise<boolean> {
  if (dialectOfKnex(knex) === 'sqlite') return hasSqliteIndex(knex, name);
  const [rows] = await knex.raw(
    'select 1 from information_schema.statistics where table_schema = database() and table_name = ? and index_name = ?',
    [table, name],
  );
  return (rows as unknown[]).length > 0;
}

/** MySQL: whether the table has a constraint of that name (of that type). */
async function hasConstraint(knex: Knex, table: string, name: string, type?: string): Promise<boolean> {
  const [rows] = await knex.raw(
    'select 1 from information_schema.table_constraints where table_schema = database() and table_name = ? ' +
      `and constraint_name = ?${type ? ' and constraint_type = ?' : ''}`,
    type ? [table, name, type] : [table, name],
  );
  return (rows as unknown[]).length > 0;
}

async function hasSqliteIndex(knex: Knex, name: string): Promise<boolean> {
  const rows = await knex('sqlite_master').where({ type: 'index', name }).select('name');
  return rows.length > 0;
}
