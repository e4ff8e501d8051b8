import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createKnex, dialectOf } from '../db/knex';
import { dialectOfKnex } from '../db/dialect';
import { PRIVATE_FILE_MODE } from '../private-files';
import type { TestBackend } from './services';

/**
 * Test engines' migrated databases, each copied from the first one this process migrated with the same plugins
 * and environment instead of migrated again: a full migration costs ~1.3 s of MariaDB DDL (~0.3 s on SQLite)
 * and a test run makes hundreds, on a two-core machine. The migrations themselves still run where they are
 * the subject: the first engine of each kind, the schema guard, the upgrade and killed-migration tests.
 * A copy is only made into an empty database (a second engine on a backend finds it migrated).
 */
interface MysqlSnapshot {
  tables: Array<{ name: string; create: string; rows: Record<string, unknown>[] }>;
}

const sqliteTemplates = new Map<string, string>();
const mysqlSnapshots = new Map<string, MysqlSnapshot>();
const restoring = new Map<string, Promise<unknown>>();
let templateFolder: string | null = null;

/**
 * Copies the database migrated under `key` into the backend's database when it is empty: `copied`; `empty` when
 * there is no copy yet (then migrate it, and keep it); `used` when it holds tables already.
 */
export function restoreMigrated(backend: TestBackend, key: string): Promise<'copied' | 'empty' | 'used'> {
  // One look-and-copy at a time per database: two engines made at once would both find it empty.
  const turn = (restoring.get(backend.databaseUrl) ?? Promise.resolve()).then(() => restore(backend, key));
  restoring.set(
    backend.databaseUrl,
    turn.catch(() => undefined),
  );
  return turn;
}

async function restore(backend: TestBackend, key: string): Promise<'copied' | 'empty' | 'used'> {
  if (dialectOf(backend.databaseUrl) === 'sqlite') {
    const file = sqliteFile(backend);
    if (!file || fs.existsSync(file)) return 'used';
    const template = sqliteTemplates.get(key);
    if (!template) return 'empty';
    fs.copyFileSync(template, file);
    fs.chmodSync(file, PRIVATE_FILE_MODE); // as the engine makes its database files
    return 'copied';
  }
  return withKnex(backend, async (knex) => {
    if ((await tableNames(knex)).length) return 'used';
    const snapshot = mysqlSnapshots.get(key);
    if (!snapshot) return 'empty';
    // Tables in any order: a foreign key may name a table created after it.
    await knex.raw('SET FOREIGN_KEY_CHECKS = 0');
    for (const table of snapshot.tables) await knex.raw(table.create);
    for (const table of snapshot.tables) if (table.rows.length) await knex(table.name).insert(table.rows);
    await knex.raw('SET FOREIGN_KEY_CHECKS = 1');
    return 'copied';
  });
}

/** Keeps the database an engine has just migrated (through its own knex) as the one to copy for `key`. */
export async function keepMigrated(knex: Knex, key: string): Promise<void> {
  if (dialectOfKnex(knex) === 'sqlite') {
    if (sqliteTemplates.has(key)) return;
    const template = path.join(folder(), `${sqliteTemplates.size}.sqlite`);
    await knex.raw('VACUUM INTO ?', [template]);
    sqliteTemplates.set(key, template);
    return;
  }
  if (mysqlSnapshots.has(key)) return;
  const tables: MysqlSnapshot['tables'] = [];
  for (const name of await tableNames(knex)) {
    const [[shown]] = await knex.raw('SHOW CREATE TABLE ??', [name]);
    tables.push({
      name,
      create: String(shown['Create Table']).replace(/ AUTO_INCREMENT=\d+/, ''),
      rows: await knex(name).select('*'),
    });
  }
  mysqlSnapshots.set(key, { tables });
}

async function tableNames(knex: Knex): Promise<string[]> {
  const [rows] = await knex.raw("SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'");
  return (rows as Array<Record<string, string>>).map((row) => Object.values(row)[0]);
}

async function withKnex<T>(backend: TestBackend, work: (knex: Knex) => Promise<T>): Promise<T> {
  const knex = createKnex(backend.databaseUrl, { pool: { min: 0, max: 1 } });
  try {
    return await work(knex);
  } finally {
    await knex.destroy();
  }
}

const sqliteFile = (backend: TestBackend) => {
  const file = backend.databaseUrl.slice('sqlite:'.length);
  return file && file !== ':memory:' ? file : null;
};

function folder(): string {
  if (templateFolder) return templateFolder;
  const made = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-migrated-'));
  process.once('exit', () => fs.rmSync(made, { recursive: true, force: true }));
  return (templateFolder = made);
}
