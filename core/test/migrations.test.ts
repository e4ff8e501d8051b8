import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex';
import { loadMigrationFiles, Migrator, MigrationNamespace } from '../src/db/migrations';
import { checkSchemaSnapshot, schemaFingerprint } from '../src/db/schema-fingerprint';
import { describeEachBackend } from '../src/testing';

const directory = path.join(__dirname, 'fixtures/migrations');
const fixture: MigrationNamespace = { id: 'fixture-plugin', version: '1.10.0', directory };
const other: MigrationNamespace = { id: 'other', version: '1.0.0', directory: path.join(__dirname, 'fixtures/none') };
const ALL = ['1.0/2-create-widgets', '1.0/10-create-owners', '1.1/01-add-widget-label', '1.1/02-backfill-widget-label', '1.2/01-create-gadgets', '1.10/01-create-gizmos'];

describe('migration files', () => {
  it('sort versions and file numbers numerically', () => {
    expect(loadMigrationFiles(fixture).map((f) => f.name)).to.deep.equal(ALL);
  });

  it('refuse a version folder newer than the release', () => {
    expect(() => loadMigrationFiles({ ...fixture, version: '1.2.0' })).to.throw('include version 1.10, newer than its release 1.2.0');
  });
});

describeEachBackend('migrator', (backend) => {
  let knex: Knex;
  let migrator: Migrator;
  const quiet = { log: { warn: () => undefined, error: () => undefined } };
  before(() => {
    knex = createKnex(backend().databaseUrl, quiet);
    migrator = new Migrator(knex, [fixture, other]);
  });
  after(() => knex.destroy());

  it('upgrades a database holding 1.0 data to 1.10, backfilling the data', async () => {
    const [first] = await migrator.latest({ plugin: 'fixture-plugin', to: '1.0' });
    expect(first.applied).to.deep.equal(ALL.slice(0, 2));
    await knex('fx_widgets').insert([{ name: 'bolt' }, { name: 'nut' }]);
    const status = (await migrator.status()).find((s) => s.plugin === 'fixture-plugin')!;
    expect(status).to.deep.include({ current: '1.0', applied: ALL.slice(0, 2), pending: ALL.slice(2) });

    const [upgraded] = await migrator.latest({ plugin: 'fixture-plugin' });
    expect(upgraded.applied).to.deep.equal(ALL.slice(2));
    const rows = await knex('fx_widgets').select('name', 'label').orderBy('id');
    expect(rows).to.deep.equal([
      { name: 'bolt', label: 'BOLT' },
      { name: 'nut', label: 'NUT' },
    ]);
    expect((await migrator.status()).find((s) => s.plugin === 'fixture-plugin')!.current).to.equal('1.10');
  });

  it('keeps one tracking table per namespace', async () => {
    expect(await knex.schema.hasTable('migrations_fixture_plugin')).to.equal(true);
    expect(await knex.schema.hasTable('migrations_other')).to.equal(false);
    const [result] = await migrator.latest({ plugin: 'other' });
    expect(result).to.deep.equal({ plugin: 'other', applied: [] });
  });

  it('rolls back the last batch, then everything above a version, then all', async () => {
    const [last] = await migrator.rollback({ plugin: 'fixture-plugin' });
    expect(last.reverted).to.have.members(ALL.slice(2));
    expect(await knex.schema.hasColumn('fx_widgets', 'label')).to.equal(false);
    expect(await knex('fx_widgets').count({ n: '*' })).to.deep.equal([{ n: 2 }]);

    await migrator.latest({ plugin: 'fixture-plugin' });
    const [toOne] = await migrator.rollback({ plugin: 'fixture-plugin', to: '1.1' });
    expect(toOne.reverted).to.deep.equal(['1.10/01-create-gizmos', '1.2/01-create-gadgets']);
    expect(await knex.schema.hasTable('fx_gadgets')).to.equal(false);
    expect(await knex.schema.hasColumn('fx_widgets', 'label')).to.equal(true);

    const [all] = await migrator.rollback({ plugin: 'fixture-plugin', to: '0' });
    expect(all.reverted).to.deep.equal(['1.1/02-backfill-widget-label', '1.1/01-add-widget-label', '1.0/10-create-owners', '1.0/2-create-widgets']);
    expect(await knex.schema.hasTable('fx_widgets')).to.equal(false);
  });

  it('names the known plugins when asked for an unknown one', async () => {
    let error: Error | undefined;
    await migrator.latest({ plugin: 'nope' }).catch((err: Error) => (error = err));
    expect(error?.message).to.equal('Unknown plugin "nope" for migrations; known: fixture-plugin, other');
  });

  it('applies each migration once when two runners start together', async () => {
    const second = createKnex(backend().databaseUrl, quiet);
    try {
      const results = await Promise.all([migrator.latest({ plugin: 'fixture-plugin' }), new Migrator(second, [fixture]).latest()]);
      const applied = results.flatMap((r) => r[0].applied);
      expect(applied).to.have.members(ALL);
      expect(applied).to.have.length(ALL.length);
      const rows = await knex('migrations_fixture_plugin').select('name');
      expect(rows.map((r: { name: string }) => r.name)).to.have.members(ALL);
    } finally {
      await second.destroy();
    }
  });
});

describe('schema snapshot guard', () => {
  const snapshotFile = path.join(os.tmpdir(), `sb-snapshot-${process.pid}.json`);
  const fresh = async (fn: (knex: Knex) => Promise<void>) => {
    const file = path.join(os.tmpdir(), `sb-guard-${process.pid}-${Math.random()}.sqlite`);
    const knex = createKnex(`sqlite:${file}`);
    try {
      await new Migrator(knex, [fixture]).latest();
      await fn(knex);
      return await schemaFingerprint(knex);
    } finally {
      await knex.destroy();
      fs.rmSync(file, { force: true });
    }
  };
  after(() => fs.rmSync(snapshotFile, { force: true }));

  it('is stable across fresh databases and catches an edited migration', async () => {
    const a = await fresh(async () => undefined);
    const b = await fresh(async () => undefined);
    expect(a.hash).to.equal(b.hash);
    checkSchemaSnapshot({ snapshotFile, actual: { lastMigration: ALL[5], ...a }, update: true });
    checkSchemaSnapshot({ snapshotFile, actual: { lastMigration: ALL[5], ...b }, update: false });

    const edited = await fresh((knex) => knex.schema.alterTable('fx_gizmos', (t) => void t.string('extra')));
    expect(edited.hash).not.to.equal(a.hash);
    expect(() => checkSchemaSnapshot({ snapshotFile, actual: { lastMigration: ALL[5], ...edited }, update: false })).to.throw(
      'an existing migration was edited',
    );
    expect(() => checkSchemaSnapshot({ snapshotFile, actual: { lastMigration: '1.11/01-new', ...edited }, update: false })).to.throw(
      'UPDATE_SCHEMA_SNAPSHOT=1',
    );
  });
});
