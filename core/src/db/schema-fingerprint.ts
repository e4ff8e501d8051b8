import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Knex } from 'knex';
import { dialectOfKnex } from './dialect';
import { Migrator } from './migrations/migrator';
import type { MigrationNamespace } from './migrations/namespace';

export type TableShape = { columns: string[]; indexes: string[]; foreignKeys: string[] };

/** Version of the description below; snapshots written by another version must be refreshed, not compared. */
export const FINGERPRINT_FORMAT = 2;

export interface SchemaFingerprint {
  format: number;
  hash: string;
  tables: Record<string, TableShape>;
}

export interface SchemaSnapshot extends SchemaFingerprint {
  lastMigration: string | null;
}

// knex's tracking and lock tables (migrations_<id>, migrations_<id>_lock, knex_*) and SQLite's own.
const BOOKKEEPING = /^(migrations_|knex_|sqlite_)/;

type Row = Record<string, unknown>;

async function sqliteShape(knex: Knex, table: string): Promise<TableShape> {
  const columns = (await knex.raw('select * from pragma_table_info(?) order by cid', [table])) as Row[];
  const indexes = (await knex.raw('select name, "unique" from pragma_index_list(?)', [table])) as Row[];
  const described = [];
  for (const index of indexes) {
    const cols = (await knex.raw('select name from pragma_index_info(?) order by seqno', [
      String(index.name),
    ])) as Row[];
    described.push(`${index.unique ? 'unique ' : ''}${index.name}(${cols.map((c) => c.name).join(',')})`);
  }
  const fks = (await knex.raw('select * from pragma_foreign_key_list(?) order by id, seq', [table])) as Row[];
  const byId = new Map<unknown, Row[]>();
  for (const fk of fks) byId.set(fk.id, [...(byId.get(fk.id) ?? []), fk]);
  return {
    columns: columns.map((c) => column(c.name, c.type, !c.notnull, c.dflt_value, c.pk ? 'pk' : '')),
    indexes: described.sort(),
    foreignKeys: [...byId.values()]
      .map((parts) =>
        foreignKey(
          parts.map((p) => p.from).join(','),
          parts[0].table,
          parts.map((p) => p.to).join(','),
          parts[0].on_delete,
          parts[0].on_update,
        ),
      )
      .sort(),
  };
}

async function mysqlShape(knex: Knex, table: string): Promise<TableShape> {
  const [columns] = await knex.raw(
    `select column_name as name, column_type as type, is_nullable as nullable, column_default as def, column_key as k, extra
     from information_schema.columns where table_schema = database() and table_name = ? order by ordinal_position`,
    [table],
  );
  const [indexes] = await knex.raw(
    `select index_name as name, non_unique as nu, group_concat(column_name order by seq_in_index) as cols
     from information_schema.statistics where table_schema = database() and table_name = ? group by index_name, non_unique`,
    [table],
  );
  const [fks] = await knex.raw(
    `select group_concat(k.column_name order by k.ordinal_position) as cols, k.referenced_table_name as ref,
       group_concat(k.referenced_column_name order by k.ordinal_position) as refCols, r.delete_rule as del, r.update_rule as upd
     from information_schema.key_column_usage k
     join information_schema.referential_constraints r on r.constraint_schema = k.constraint_schema and r.constraint_name = k.constraint_name
     where k.table_schema = database() and k.table_name = ? and k.referenced_table_name is not null
     group by k.constraint_name, k.referenced_table_name, r.delete_rule, r.update_rule`,
    [table],
  );
  return {
    columns: (columns as Row[]).map((c) =>
      column(
        c.name,
        c.type,
        c.nullable !== 'NO',
        c.def,
        [c.k === 'PRI' ? 'pk' : '', String(c.extra ?? '')].filter(Boolean).join(' '),
      ),
    ),
    indexes: (indexes as Row[]).map((i) => `${Number(i.nu) ? '' : 'unique '}${i.name}(${i.cols})`).sort(),
    foreignKeys: (fks as Row[]).map((f) => foreignKey(f.cols, f.ref, f.refCols, f.del, f.upd)).sort(),
  };
}

const column = (name: unknown, type: unknown, nullable: boolean, def: unknown, extra: string) =>
  `${name} ${type}${nullable ? '' : ' not null'}${def !== null && def !== undefined ? ` default ${def}` : ''}${extra ? ` ${extra}` : ''}`;

const foreignKey = (cols: unknown, table: unknown, refCols: unknown, onDelete: unknown, onUpdate: unknown) =>
  `(${cols}) -> ${table}(${refCols}) on delete ${String(onDelete).toLowerCase()} on update ${String(onUpdate).toLowerCase()}`;

/** User tables, without the migration bookkeeping. */
export async function listTables(knex: Knex): Promise<string[]> {
  const names =
    dialectOfKnex(knex) === 'sqlite'
      ? ((await knex('sqlite_master').where({ type: 'table' }).select('name')) as Array<{ name: string }>)
      : ((
          await knex.raw(
            "select table_name as name from information_schema.tables where table_schema = database() and table_type = 'BASE TABLE'",
          )
        )[0] as Array<{
          name: string;
        }>);
  return names
    .map((r) => r.name)
    .filter((n) => !BOOKKEEPING.test(n))
    .sort();
}

/** A stable, dialect-specific description of the given tables (all user tables by default) and its hash. */
export async function schemaFingerprint(knex: Knex, tables?: string[]): Promise<SchemaFingerprint> {
  const shape = dialectOfKnex(knex) === 'sqlite' ? sqliteShape : mysqlShape;
  const described: Record<string, TableShape> = {};
  for (const table of [...(tables ?? (await listTables(knex)))].sort()) described[table] = await shape(knex, table);
  const hash = crypto.createHash('sha256').update(JSON.stringify(described)).digest('hex');
  return { format: FINGERPRINT_FORMAT, hash, tables: described };
}

export interface SchemaSnapshotCheck {
  /** A fresh SQLite database; the namespaces it depends on may be migrated already, this one not. */
  knex: Knex;
  namespace: MigrationNamespace;
  snapshotFile: string;
  /** Rewrite the snapshot instead of comparing. Default: UPDATE_SCHEMA_SNAPSHOT=1. */
  update?: boolean;
}

/**
 * The guard against schema changes without a new migration: runs the namespace's migrations, describes
 * the tables they created or changed, and compares that with the committed snapshot.
 */
export function checkSchemaSnapshot(options: SchemaSnapshotCheck): Promise<void>;
/** Compares a snapshot the caller built. */
export function checkSchemaSnapshot(options: { snapshotFile: string; actual: SchemaSnapshot; update?: boolean }): void;
export function checkSchemaSnapshot(
  options: SchemaSnapshotCheck | { snapshotFile: string; actual: SchemaSnapshot; update?: boolean },
): Promise<void> | void {
  if ('actual' in options) return compareSchemaSnapshot(options.snapshotFile, options.actual, options.update);
  return migrateAndCompare(options);
}

async function migrateAndCompare({ knex, namespace, snapshotFile, update }: SchemaSnapshotCheck): Promise<void> {
  if (dialectOfKnex(knex) !== 'sqlite')
    throw new Error('checkSchemaSnapshot describes SQLite schemas: give it a fresh SQLite database');
  const migrator = new Migrator(knex, [namespace]);
  const [before] = await migrator.status();
  if (before.applied.length) {
    throw new Error(
      `checkSchemaSnapshot needs a database where "${namespace.id}" has not migrated yet; ${before.applied.length} migrations are applied`,
    );
  }
  const tablesBefore = (await schemaFingerprint(knex)).tables;
  await migrator.latest();
  const tablesAfter = (await schemaFingerprint(knex)).tables;
  const own = Object.keys(tablesAfter).filter(
    (t) => JSON.stringify(tablesAfter[t]) !== JSON.stringify(tablesBefore[t]),
  );
  const [after] = await migrator.status();
  const actual = {
    lastMigration: after.applied[after.applied.length - 1] ?? null,
    ...(await schemaFingerprint(knex, own)),
  };
  compareSchemaSnapshot(snapshotFile, actual, update);
}

function compareSchemaSnapshot(
  snapshotFile: string,
  actual: SchemaSnapshot,
  update = process.env.UPDATE_SCHEMA_SNAPSHOT === '1',
): void {
  const snapshot = {
    format: actual.format,
    lastMigration: actual.lastMigration,
    hash: actual.hash,
    tables: actual.tables,
  };
  if (update) return fs.writeFileSync(snapshotFile, `${JSON.stringify(snapshot, null, 2)}\n`);

  const refresh = `run this test again with UPDATE_SCHEMA_SNAPSHOT=1 (e.g. UPDATE_SCHEMA_SNAPSHOT=1 npm test) to rewrite ${snapshotFile}, and commit it`;
  if (!fs.existsSync(snapshotFile)) throw new Error(`No schema snapshot at ${snapshotFile}: ${refresh}.`);
  const expected = JSON.parse(fs.readFileSync(snapshotFile, 'utf8')) as Partial<SchemaSnapshot>;
  const expectedFormat = expected.format ?? 1;
  if (expectedFormat !== actual.format) {
    throw new Error(
      `${snapshotFile} was written by schema fingerprint format ${expectedFormat}, now ${actual.format}; the migrations are not at fault: ${refresh}.`,
    );
  }
  if (expected.lastMigration !== actual.lastMigration) {
    throw new Error(
      `New migrations since the schema snapshot (it ends at ${expected.lastMigration ?? 'none'}, the migrations at ${actual.lastMigration ?? 'none'}): ` +
        `${refresh} together with the migration.`,
    );
  }
  if (expected.hash !== actual.hash) {
    const names = new Set([...Object.keys(expected.tables ?? {}), ...Object.keys(actual.tables)]);
    const differ = [...names]
      .filter((t) => JSON.stringify(expected.tables?.[t]) !== JSON.stringify(actual.tables[t]))
      .sort();
    throw new Error(
      `The schema changed without a new migration (tables that differ: ${differ.join(', ') || 'unknown'}; newest migration still ${actual.lastMigration}): ` +
        `an existing migration was edited. Databases that already ran it will never run the edit, so undo it and make the change ` +
        `in a new migration (migrations/<x.y>/NN-name.ts); then ${refresh} together with the new migration.`,
    );
  }
}
