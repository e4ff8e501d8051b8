import { expect } from 'chai';
import type { Knex } from 'knex';
import { dialectOfKnex, listTables, schemaFingerprint } from '@switchboard/core';
import {
  createTenant,
  createTestEngine,
  describeEachBackend,
  embeddedBackend,
  keepMigrated,
  productionBackend,
  restoreMigrated,
  TestBackend,
} from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import monitor from '@switchboard/plugin-server-monitor';
import usersProjects from '@switchboard/plugin-users-projects';

const plugins = [usersProjects, campaign, monitor];

/**
 * Every table as the database states it (SQLite's CREATE text, MariaDB's SHOW CREATE TABLE: columns, collations,
 * keys, foreign keys, options; the next AUTO_INCREMENT aside), and the rows of the tables a fresh migration fills.
 */
async function contents(knex: Knex) {
  const tables = (await listTables(knex)).sort();
  const sqlite = dialectOfKnex(knex) === 'sqlite';
  const ddl: string[] = sqlite
    ? (await knex('sqlite_master').orderBy('name').select('type', 'name', 'sql')).map((r) => JSON.stringify(r))
    : await Promise.all(
        tables.map(async (table) => {
          const [[shown]] = await knex.raw('SHOW CREATE TABLE ??', [table]);
          return String(shown['Create Table']).replace(/ AUTO_INCREMENT=\d+/, '');
        }),
      );
  const rows: Record<string, unknown[]> = {};
  for (const table of tables) {
    const all = await knex(table).select('*');
    if (all.length) rows[table] = all.map((row) => JSON.stringify(row));
  }
  return { schema: (await schemaFingerprint(knex, tables)).hash, ddl, rows };
}

/**
 * Test engines copy a database migrated by the first engine of the same plugins (core/src/testing/
 * migrated-copies.ts): the copy must be that database, tables, indexes, foreign keys and rows alike, and a
 * database in use is never written over.
 */
describeEachBackend('test engines: a migrated database copied', (backend) => {
  const made: TestBackend[] = [];
  const another = async () => {
    const b = backend().name === 'embedded' ? embeddedBackend() : await productionBackend();
    made.push(b!);
    return b!;
  };
  after(async () => {
    for (const b of made) await b.dispose();
  });

  it('is the migrated database, and a database in use, or being copied into, is left as it is', async function () {
    this.timeout(60_000);
    const key = `copy-test-${backend().name}`;
    // Migrated for real, then kept.
    const original = await createTestEngine(backend(), { plugins, migrate: false });
    await original.migrator().latest();
    const expected = await contents(original.knex);
    await keepMigrated(original.knex, key);
    await original.close();

    const target = await another();
    expect(await restoreMigrated(await another(), 'no such key')).to.equal('empty');
    expect(await restoreMigrated(target, key)).to.equal('copied');
    const copy = await createTestEngine(target, { plugins, migrate: false });
    try {
      expect((await copy.migrator().status()).every((s) => s.pending.length === 0)).to.equal(true);
      expect(await contents(copy.knex)).to.deep.equal(expected);
      // A working database: an organization and its token written.
      const tenant = await createTenant(copy);
      expect(await restoreMigrated(target, key)).to.equal('used');
      expect(await copy.knex('organizations').where({ id: tenant.organizationId }).first()).to.not.equal(undefined);
    } finally {
      await copy.close();
    }
    // Two engines made at once on one empty database: one copies, the other finds it copied.
    const shared = await another();
    const both = await Promise.all([restoreMigrated(shared, key), restoreMigrated(shared, key)]);
    expect(both.sort()).to.deep.equal(['copied', 'used']);
  });
});
