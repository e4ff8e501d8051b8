import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Knex } from 'knex';
import { dialectOfKnex } from './dialect';

export type TableShape = { columns: string[]; indexes: string[] };

const BOOKKEEPING = /^(migrations_|knex_|sqlite_)/;

async function sqliteShape(knex: Knex, table: string): Promise<TableShape> {
  const columns = (await knex.raw(`pragma table_info(\`${table}\`)`)) as Array<Record<string, unknown>>;
  const indexes = (await knex.raw(`pragma index_list(\`${table}\`)`)) as Array<{ name: string; unique: number }>;
  const described = [];
  for (const index of indexes) {
    const cols = (await knex.raw(`pragma index_info(\`${index.name}\`)`)) as Array<{ name: string }>;
    described.push(`${index.unique ? 'unique ' : ''}${index.name}(${cols.map((c) => c.name).join(',')})`);
  }
  return {
    columns: columns.map((c) => `${c.name} ${c.type}${c.notnull ? ' not null' : ''}${c.dflt_value !== null ? ` default ${c.dflt_value}` : ''}${c.pk ? ' pk' : ''}`),
    indexes: described.sort(),
  };
}

async function mysqlShape(knex: Knex, table: string): Promise<TableShape> {
  const [columns] = await knex.raw(
    'select column_name as name, column_type as type, is_nullable as nullable, column_default as def, column_key as k from information_schema.columns where table_schema = database() and table_name = ? order by ordinal_position',
    [table],
  );
  const [indexes] = await knex.raw(
    "select index_name as name, non_unique as nu, group_concat(column_name order by seq_in_index) as cols from information_schema.statistics where table_schema = database() and table_name = ? group by index_name, non_unique",
    [table],
  );
  return {
    columns: (columns as Array<Record<string, unknown>>).map(
      (c) => `${c.name} ${c.type}${c.nullable === 'NO' ? ' not null' : ''}${c.def !== null ? ` default ${c.def}` : ''}${c.k === 'PRI' ? ' pk' : ''}`,
    ),
    indexes: (indexes as Array<{ name: string; nu: number; cols: string }>).map((i) => `${Number(i.nu) ? '' : 'unique '}${i.name}(${i.cols})`).sort(),
  };
}

export async function listTables(knex: Knex): Promise<string[]> {
  if (dialectOfKnex(knex) === 'sqlite') {
    const rows = await knex('sqlite_master').where({ type: 'table' }).select('name');
    return rows.map((r: { name: string }) => r.name).filter((n: string) => !BOOKKEEPING.test(n)).sort();
  }
  const [rows] = await knex.raw('select table_name as name from information_schema.tables where table_schema = database()');
  return (rows as Array<{ name: string }>).map((r) => r.name).filter((n) => !BOOKKEEPING.test(n)).sort();
}

/** A stable description of the given tables (all user tables by default) and its hash. */
export async function schemaFingerprint(knex: Knex, tables?: string[]): Promise<{ hash: string; tables: Record<string, TableShape> }> {
  const shape = dialectOfKnex(knex) === 'sqlite' ? sqliteShape : mysqlShape;
  const described: Record<string, TableShape> = {};
  for (const table of (tables ?? (await listTables(knex))).sort()) described[table] = await shape(knex, table);
  return { hash: crypto.createHash('sha256').update(JSON.stringify(described)).digest('hex'), tables: described };
}

export interface SchemaSnapshot {
  lastMigration: string | null;
  hash: string;
  tables: Record<string, TableShape>;
}

/**
 * The guard against schema changes without a migration: compares what the migrations build with a
 * committed snapshot. UPDATE_SCHEMA_SNAPSHOT=1 (or update: true) rewrites the snapshot instead.
 */
export function checkSchemaSnapshot(options: { snapshotFile: string; actual: SchemaSnapshot; update?: boolean }): void {
  const { snapshotFile, actual } = options;
  const write = () => fs.writeFileSync(snapshotFile, `${JSON.stringify(actual, null, 2)}\n`);
  if (options.update ?? process.env.UPDATE_SCHEMA_SNAPSHOT === '1') return write();
  if (!fs.existsSync(snapshotFile)) {
    throw new Error(`No schema snapshot at ${snapshotFile}: run the test once with UPDATE_SCHEMA_SNAPSHOT=1 and commit the file.`);
  }
  const expected = JSON.parse(fs.readFileSync(snapshotFile, 'utf8')) as SchemaSnapshot;
  if (expected.hash === actual.hash && expected.lastMigration === actual.lastMigration) return;
  if (expected.lastMigration === actual.lastMigration) {
    throw new Error(
      `The schema changed but the newest migration is still ${actual.lastMigration}: an existing migration was edited. ` +
        'Put the change in a new migration (released databases never run an edited one again), then refresh the snapshot with UPDATE_SCHEMA_SNAPSHOT=1.',
    );
  }
  throw new Error(
    `New migrations (now up to ${actual.lastMigration}, snapshot at ${expected.lastMigration}): refresh ${snapshotFile} by running the tests with UPDATE_SCHEMA_SNAPSHOT=1 and commit it with the migration.`,
  );
}
