import { expect } from 'chai';
import type { Knex } from 'knex';
import { listTables, schemaFingerprint } from '@switchboard/core';
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

/** Every table's shape, and the rows of the tables a fresh migration fills (bookkeeping and settings). */
async function contents(knex: Knex) {
  const tables = await listTables(knex);
  const rows: Record<string, unknown[]> = {};
  for (const table of tables.sort()) {
    const all = await knex(table).select('*');
    if (all.length) rows[table] = all.map((row) => JSON.stringify(row, (_k, v) => (v instanceof Date ? 'date' : v)));
  }
  return { schema: (await schemaFingerprint(knex, tables)).hash, rows };
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

  it('is the migrated database, and a database in use is left as it is', async function () {
    this.timeout(60_000);
    const key = `copy-test-${backend().name}`;
    // Migrated for real, then kept.
    const original = await createTestEngine(backend(), { plugins, migrate: false });
    await original.migrator().latest();
    const expected = await contents(original.knex);
    await keepMigrated(backend(), key);
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
  });
});
