import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex';
import { loadMigrationFiles, Migrator, MigrationNamespace } from '../src/db/migrations';
import { ensureTrackingTables } from '../src/db/migrations/tracking-tables';
import { checkSchemaSnapshot, schemaFingerprint } from '../src/db/schema-fingerprint';
import { SecretBox } from '../src/secrets/secret-box';
import { describeEachBackend, embeddedBackend, TestBackend } from '../src/testing/services';
import { waitFor } from '../src/testing/wait';

const fixtures = path.join(__dirname, 'fixtures/migrations');
const widgets: MigrationNamespace = { id: 'widgets', version: '1.10', directory: path.join(fixtures, 'widgets') };
const notes: MigrationNamespace = { id: 'fx-notes', version: '1.0.3', directory: path.join(fixtures, 'notes') };
const editedNotes: MigrationNamespace = { ...notes, directory: path.join(fixtures, 'notes-edited') };

const V1_0 = ['1.0/2-create-widgets', '1.0/10-create-owners'];
const V1_1 = ['1.1/01-add-widget-label', '1.1/02-backfill-widget-label'];
const V1_2 = ['1.2/01-create-gadgets'];
const V1_10 = ['1.10/01-create-gizmos'];
const ALL = [...V1_0, ...V1_1, ...V1_2, ...V1_10];
const NOTES = ['1.0/01-create-notes'];

// knex warns on every lock it cannot take; the concurrency tests provoke that on purpose.
const quiet = { log: { warn: () => undefined, error: () => undefined } };

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the promise to reject');
}

const names = async (knex: Knex, table: string) =>
  (await knex(table).select('name').orderBy('id')).map((r: { name: string }) => r.name);

describe('loadMigrationFiles', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-migration-files-'));
  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('orders version folders and files numerically and loads only the compiled .js files', () => {
    expect(fs.readdirSync(path.join(widgets.directory, '1.0'))).to.include.members([
      '2-create-widgets.d.ts',
      '2-create-widgets.js.map',
    ]);
    const files = loadMigrationFiles(widgets);
    expect(files.map((f) => f.name)).to.deep.equal(ALL);
    expect(files[0]).to.deep.equal({
      name: '1.0/2-create-widgets',
      version: '1.0',
      file: path.join(widgets.directory, '1.0/2-create-widgets.js'),
    });
  });

  it('rejects a version folder newer than the namespace version', () => {
    expect(() => loadMigrationFiles({ ...widgets, version: '1.9.4' })).to.throw(
      'Migrations of "widgets" include folder 1.10, newer than its version 1.9.4 allows (1.9)',
    );
  });

  it('rejects files and folders it cannot order', () => {
    const folder = path.join(scratch, '1.0');
    fs.mkdirSync(folder);
    const ns = { id: 'scratch', version: '1.0', directory: scratch };
    fs.writeFileSync(path.join(folder, 'create-users.js'), '');
    expect(() => loadMigrationFiles(ns)).to.throw('create-users.js is not a compiled migration named NN-name.js');
    fs.rmSync(path.join(folder, 'create-users.js'));
    fs.writeFileSync(path.join(folder, '01-users.js'), '');
    fs.writeFileSync(path.join(folder, '1-projects.js'), '');
    expect(() => loadMigrationFiles(ns)).to.throw('01-users.js and 1-projects.js');
    fs.mkdirSync(path.join(scratch, 'v2'));
    expect(() => loadMigrationFiles(ns)).to.throw('v2 is not named like x.y');
  });

  it("rejects a compiled migration beside sources that have none (a stale build's leftover), saying what to run", () => {
    const plugin = path.join(scratch, 'plugin');
    for (const d of ['migrations/1.0', 'dist/migrations/1.0']) fs.mkdirSync(path.join(plugin, d), { recursive: true });
    fs.writeFileSync(path.join(plugin, 'migrations/1.0/01-users.ts'), '');
    fs.writeFileSync(path.join(plugin, 'dist/migrations/1.0/01-users.js'), '');
    const ns = { id: 'stale', version: '1.0', directory: path.join(plugin, 'dist/migrations') };
    expect(loadMigrationFiles(ns).map((f) => f.name)).to.deep.equal(['1.0/01-users']);
    fs.writeFileSync(path.join(plugin, 'dist/migrations/1.0/02-moved-away.js'), '');
    expect(() => loadMigrationFiles(ns)).to.throw('02-moved-away.js has no source');
    expect(() => loadMigrationFiles(ns)).to.throw('a stale build. Run npm run clean');
  });
});

describeEachBackend('migrations: upgrading', (backend) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-migrations-'));
  let knex: Knex;
  let migrator: Migrator;
  before(() => {
    knex = createKnex(backend().databaseUrl, quiet);
    migrator = new Migrator(knex, [widgets, notes]);
  });
  after(async () => {
    await knex.destroy();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('applies only the folders up to `to` and reports the rest as pending', async () => {
    expect(await migrator.latest({ to: '1.0' })).to.deep.equal([
      { plugin: 'widgets', applied: V1_0 },
      { plugin: 'fx-notes', applied: NOTES },
    ]);
    expect(await migrator.status()).to.deep.equal([
      {
        plugin: 'widgets',
        version: '1.10',
        applied: V1_0,
        pending: [...V1_1, ...V1_2, ...V1_10],
        current: '1.0',
        unknown: [],
      },
      { plugin: 'fx-notes', version: '1.0.3', applied: NOTES, pending: [], current: '1.0', unknown: [] },
    ]);
    expect(await knex.schema.hasColumn('fx_widgets', 'label')).to.equal(false);
  });

  it('keeps data written under 1.0 when upgrading to 1.2, whose 1.1 backfills a new column from it', async () => {
    await knex('fx_widgets').insert([{ name: 'bolt' }, { name: 'nut' }]);
    expect(await migrator.latest({ plugin: 'widgets', to: '1.2' })).to.deep.equal([
      { plugin: 'widgets', applied: [...V1_1, ...V1_2] },
    ]);
    expect(await knex('fx_widgets').select('name', 'label').orderBy('id')).to.deep.equal([
      { name: 'bolt', label: 'BOLT' },
      { name: 'nut', label: 'NUT' },
    ]);
    const [status] = await migrator.status();
    expect(status).to.deep.include({ current: '1.2', pending: V1_10 });
  });

  it('applies the rest without `to`, and nothing a second time', async () => {
    expect(await migrator.latest()).to.deep.equal([
      { plugin: 'widgets', applied: V1_10 },
      { plugin: 'fx-notes', applied: [] },
    ]);
    expect(await migrator.latest()).to.deep.equal([
      { plugin: 'widgets', applied: [] },
      { plugin: 'fx-notes', applied: [] },
    ]);
    expect((await migrator.status()).map((s) => s.current)).to.deep.equal(['1.10', '1.0']);
  });

  it('refuses to migrate when an applied migration has no file any more, as after a plugin downgrade', async () => {
    const downgraded = path.join(scratch, 'widgets-1.2');
    fs.cpSync(widgets.directory, downgraded, { recursive: true });
    fs.rmSync(path.join(downgraded, '1.10'), { recursive: true });
    const older = new Migrator(knex, [{ ...widgets, version: '1.2', directory: downgraded }]);
    const said =
      'Migrations of "widgets": the database holds 1.10/01-create-gizmos, which release 1.2 does not have: a newer ' +
      'release migrated it. Run this command with that release; to come back to this one, roll back with the newer ' +
      'release first: "switchboard migrate:rollback --plugin widgets --to 1.2".';
    expect((await rejection(older.latest())).message).to.equal(said);
    expect((await rejection(older.rollback({ to: '1.0' }))).message).to.equal(said);
    expect((await older.status())[0].unknown).to.deep.equal(['1.10/01-create-gizmos']);
    expect((await migrator.status())[0].unknown).to.deep.equal([]);
    // Newer migrations within this release's own x.y: `--to` would keep them, the bare rollback does not.
    const within = new Migrator(knex, [{ ...widgets, version: '1.10.0', directory: downgraded }]);
    expect((await rejection(within.latest())).message).to.include(
      'roll back with the newer release first: "switchboard migrate:rollback --plugin widgets" (the last run\'s migrations',
    );
  });

  it('records each namespace in its own tracking table, with its own lock', async () => {
    expect(await names(knex, 'migrations_widgets')).to.deep.equal(ALL);
    expect(await names(knex, 'migrations_fx_notes')).to.deep.equal(NOTES);
    expect(await knex('migrations_widgets_lock').select('is_locked')).to.deep.equal([{ is_locked: 0 }]);
    expect(await knex('migrations_fx_notes_lock').select('is_locked')).to.deep.equal([{ is_locked: 0 }]);
  });

  it('fingerprints the user tables with columns, indexes and foreign keys, without the bookkeeping', async () => {
    const fingerprint = await schemaFingerprint(knex);
    expect(Object.keys(fingerprint.tables)).to.deep.equal([
      'fx_gadgets',
      'fx_gizmos',
      'fx_note_tags',
      'fx_notes',
      'fx_owners',
      'fx_widgets',
    ]);
    expect(fingerprint.tables.fx_widgets.columns.filter((c) => c.startsWith('label '))).to.have.length(1);
    expect(fingerprint.tables.fx_notes.indexes).to.include('fx_notes_status_idx(status)');
    expect(fingerprint.tables.fx_note_tags.indexes).to.include('unique fx_note_tags_unique(note_id,tag)');
    expect(fingerprint.tables.fx_note_tags.foreignKeys).to.have.length(1);
    expect(fingerprint.tables.fx_note_tags.foreignKeys[0]).to.match(/^\(note_id\) -> fx_notes\(id\) on delete cascade/);
    expect((await schemaFingerprint(knex)).hash).to.equal(fingerprint.hash);
  });

  it('names the known plugins when asked for an unknown one, and rejects a `to` that is no version', async () => {
    const known = 'Unknown plugin "nope" for migrations; known: widgets, fx-notes';
    expect((await rejection(migrator.latest({ plugin: 'nope' }))).message).to.equal(known);
    expect((await rejection(migrator.rollback({ plugin: 'nope' }))).message).to.equal(known);
    expect((await rejection(migrator.latest({ to: 'v1' }))).message).to.equal(
      'latest({ to }) must be a version such as 1.2 (or 0), got "v1"',
    );
  });
});

describeEachBackend('migrations: rollback', (backend) => {
  let knex: Knex;
  let migrator: Migrator;
  before(() => {
    knex = createKnex(backend().databaseUrl, quiet);
    migrator = new Migrator(knex, [widgets]);
  });
  after(() => knex.destroy());

  it("reverts only the last run's namespaces without a plugin or `to`: an older install is left whole", async () => {
    const both = new Migrator(knex, [widgets, notes]);
    await both.latest({ to: '1.0' });
    // Installed an hour ago: the upgrade below is the last run, and touches widgets alone.
    for (const table of ['migrations_widgets', 'migrations_fx_notes'])
      await knex(table).update({ migration_time: new Date(Date.now() - 3_600_000) });
    await both.latest({ plugin: 'widgets' });
    const reverted = await both.rollback();
    expect(reverted.map((r) => r.plugin)).to.deep.equal(['widgets']);
    expect(reverted[0].reverted).to.include('1.1/01-add-widget-label');
    expect(await names(knex, 'migrations_widgets')).to.deep.equal(V1_0);
    expect(await names(knex, 'migrations_fx_notes')).to.not.deep.equal([]);
    await both.rollback({ to: '0' });
  });

  it('migrates one plugin alone only once the namespaces before it are migrated', async () => {
    const both = new Migrator(knex, [widgets, notes]);
    const refused = await rejection(both.latest({ plugin: 'fx-notes' }));
    expect(refused.message).to.equal(
      'Migrations of "fx-notes" come after those of widgets, which are not all applied: run "switchboard migrate" (every plugin, in order) first',
    );
    expect(await knex.schema.hasTable('fx_notes')).to.equal(false);
    await both.latest({ plugin: 'widgets' });
    expect(await both.latest({ plugin: 'fx-notes' })).to.deep.equal([{ plugin: 'fx-notes', applied: NOTES }]);
    await both.rollback({ to: '0' });
  });

  it('reverts the last batch without `to`', async () => {
    await migrator.latest({ to: '1.0' });
    await migrator.latest();
    expect(await migrator.rollback()).to.deep.equal([
      {
        plugin: 'widgets',
        reverted: [
          '1.10/01-create-gizmos',
          '1.2/01-create-gadgets',
          '1.1/02-backfill-widget-label',
          '1.1/01-add-widget-label',
        ],
      },
    ]);
    expect(await names(knex, 'migrations_widgets')).to.deep.equal(V1_0);
    expect(await knex.schema.hasColumn('fx_widgets', 'label')).to.equal(false);
    expect(await knex.schema.hasTable('fx_widgets')).to.equal(true);
  });

  it('reverts every migration of a folder later than `to`, newest first', async () => {
    await migrator.latest();
    expect(await migrator.rollback({ plugin: 'widgets', to: '1.1' })).to.deep.equal([
      { plugin: 'widgets', reverted: ['1.10/01-create-gizmos', '1.2/01-create-gadgets'] },
    ]);
    expect(await knex.schema.hasTable('fx_gadgets')).to.equal(false);
    expect(await knex.schema.hasColumn('fx_widgets', 'label')).to.equal(true);
    expect((await migrator.status())[0]).to.deep.include({ current: '1.1', pending: [...V1_2, ...V1_10] });
    expect(await migrator.rollback({ to: '1.1' })).to.deep.equal([{ plugin: 'widgets', reverted: [] }]);
  });

  it('reverts everything with `to: 0`, plugins before what they depend on', async () => {
    const both = new Migrator(knex, [widgets, notes]);
    await both.latest();
    expect(await both.rollback({ to: '0' })).to.deep.equal([
      { plugin: 'fx-notes', reverted: NOTES },
      {
        plugin: 'widgets',
        reverted: [
          '1.10/01-create-gizmos',
          '1.2/01-create-gadgets',
          '1.1/02-backfill-widget-label',
          '1.1/01-add-widget-label',
          '1.0/10-create-owners',
          '1.0/2-create-widgets',
        ],
      },
    ]);
    expect(await both.status()).to.deep.equal([
      { plugin: 'widgets', version: '1.10', applied: [], pending: ALL, current: null, unknown: [] },
      { plugin: 'fx-notes', version: '1.0.3', applied: [], pending: NOTES, current: null, unknown: [] },
    ]);
    expect(await knex.schema.hasTable('fx_widgets')).to.equal(false);
    expect(await knex.schema.hasTable('fx_notes')).to.equal(false);
  });
});

describeEachBackend('migrations: concurrent runners', (backend) => {
  const opened: Knex[] = [];
  const open = (options: Parameters<typeof createKnex>[1] = quiet) => {
    const knex = createKnex(backend().databaseUrl, options);
    opened.push(knex);
    return knex;
  };
  after(() => Promise.all(opened.map((knex) => knex.destroy())));

  // On SQLite this takes about 5 s: better-sqlite3 is synchronous, so the runner waiting on SQLite's busy
  // timeout blocks the other one in this same process until the timeout ends. Separate processes do not.
  it('apply each migration exactly once when they meet a fresh database', async () => {
    const [a, b] = [open(), open()];
    const results = await Promise.all([new Migrator(a, [widgets]).latest(), new Migrator(b, [widgets]).latest()]);
    expect(results.map(([r]) => r.applied.length).sort()).to.deep.equal([0, ALL.length]);
    expect(results.flatMap(([r]) => r.applied)).to.have.members(ALL);
    expect(await names(a, 'migrations_widgets')).to.deep.equal(ALL);
    expect(await a('migrations_widgets_lock').select('is_locked')).to.deep.equal([{ is_locked: 0 }]);
    // Closed now: an idle connection of this test must not meet the next one's runners on SQLite.
    await Promise.all([a, b].map((k) => k.destroy()));
    opened.splice(opened.indexOf(a), 2);
  }).timeout(30_000);

  it('wait for a lock held by another runner, and fail saying how to clear a stale one', async function () {
    // A few seconds on SQLite when the machine is busy (its busy timeout blocks the one thread); 1 s here.
    this.timeout(60_000);
    const warnings: string[] = [];
    const knex = open({ log: { warn: (m) => warnings.push(m), error: () => undefined } });
    await new Migrator(knex, [widgets]).rollback({ to: '1.2' });
    // What a runner killed mid-migration leaves behind.
    await knex('migrations_widgets_lock').update({ is_locked: 1 });

    const impatient = new Migrator(knex, [widgets], { lockTimeoutMs: 300 });
    const error = await rejection(impatient.latest());
    expect(error.message).to.match(/^Migrations of "widgets" stayed locked by another runner for 0\.3 s/);
    expect(error.message).to.include('"switchboard migrate:unlock --plugin widgets"');
    expect((await impatient.status())[0].pending).to.deep.equal(V1_10);

    warnings.length = 0;
    const said: string[] = [];
    let failed: unknown;
    const waiting = new Migrator(knex, [widgets], { log: { warn: (m) => said.push(m) } }).latest();
    waiting.catch((err: unknown) => (failed = err));
    await waitFor(() => said.length > 0 || failed !== undefined, 30_000);
    if (failed) throw failed;
    // Said once, in our words; knex's own pair (several a second, advising "knex migrate:unlock") is not logged.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(said).to.deep.equal([
      'Migrations of "widgets": another runner holds the lock (migrations_widgets_lock); waiting up to 60 s for it',
    ]);
    expect(warnings.filter((w) => /lock/i.test(w))).to.deep.equal([]);
    expect(await impatient.unlock('widgets')).to.deep.equal(['widgets']);
    expect(await waiting).to.deep.equal([{ plugin: 'widgets', applied: V1_10 }]);
  });

  it('unlock while a runner waits leaves one lock row, which the waiting runner then takes', async function () {
    this.timeout(60_000);
    const [knex, other] = [open(), open()];
    const migrator = new Migrator(knex, [widgets]);
    await migrator.rollback({ to: '1.2' });
    const lockRows = () => knex('migrations_widgets_lock').select('is_locked').orderBy('index');
    // A runner's check for its lock row against the command's clearing, many times over: knex's own clearing
    // (delete, then insert) let the runner insert a row in between, and two rows were locked for good.
    for (let round = 0; round < 150; round++) {
      await knex('migrations_widgets_lock').update({ is_locked: 1 });
      await Promise.all([migrator.unlock('widgets'), ensureTrackingTables(other, 'migrations_widgets')]);
      expect(await lockRows(), `round ${round}`).to.deep.equal([{ is_locked: 0 }]);
    }
    // A second row, as that race (or an older release's unlock) left it: the runner cannot take the lock ...
    await knex('migrations_widgets_lock').insert({ index: 7, is_locked: 0 });
    const error = await rejection(new Migrator(knex, [widgets], { lockTimeoutMs: 300 }).latest());
    expect(error.message).to.match(/stayed locked by another runner/);
    // ... until the lock is cleared.
    expect(await migrator.unlock('widgets')).to.deep.equal(['widgets']);
    expect(await lockRows()).to.deep.equal([{ is_locked: 0 }]);
    expect(await migrator.latest()).to.deep.equal([{ plugin: 'widgets', applied: V1_10 }]);
  });
});

describe('migrations: their context', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-migration-context-'));
  const backend = embeddedBackend();
  const knex = createKnex(backend.databaseUrl, quiet);
  after(async () => {
    await knex.destroy();
    await backend.dispose();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('gives a migration the application key to seal and open with, and says when none was given', async () => {
    fs.mkdirSync(path.join(scratch, '1.0'));
    fs.writeFileSync(
      path.join(scratch, '1.0/01-sealed.js'),
      `exports.up = async (knex, context) => {
        await knex.schema.createTable('fx_sealed', (t) => t.text('value'));
        await knex('fx_sealed').insert({ value: context.secrets.seal('hush') });
      };
      exports.down = async (knex, context) => {
        const [row] = await knex('fx_sealed').select('value');
        if (context.secrets.open(row.value) !== 'hush') throw new Error('not opened');
        await knex.schema.dropTable('fx_sealed');
      };`,
    );
    const sealed: MigrationNamespace = { id: 'fx-sealed', version: '1.0', directory: scratch };
    const error = await rejection(new Migrator(knex, [sealed]).latest());
    expect(error.message).to.contain('This migration needs the application key: run it through the engine');
    expect(await knex.schema.hasTable('fx_sealed')).to.equal(false);

    const box = new SecretBox(Buffer.alloc(32, 7));
    const migrator = new Migrator(knex, [sealed], { secrets: () => box });
    await migrator.latest();
    const [row] = await knex('fx_sealed').select('value');
    expect(row.value).to.match(/^v1:/);
    expect(box.open(row.value)).to.equal('hush');
    await migrator.rollback();
    expect(await knex.schema.hasTable('fx_sealed')).to.equal(false);
  });
});

describe('schema snapshot guard', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-schema-snapshot-'));
  const opened: Array<{ knex: Knex; backend: TestBackend }> = [];
  const freshSqlite = () => {
    const backend = embeddedBackend();
    const knex = createKnex(backend.databaseUrl, quiet);
    opened.push({ knex, backend });
    return knex;
  };
  after(async () => {
    for (const { knex, backend } of opened) {
      await knex.destroy();
      await backend.dispose();
    }
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('gives two fresh databases the same hash, and covers only the namespace’s own tables', async () => {
    const [a, b] = [freshSqlite(), freshSqlite()];
    for (const knex of [a, b]) await new Migrator(knex, [widgets, notes]).latest();
    expect((await schemaFingerprint(a)).hash).to.equal((await schemaFingerprint(b)).hash);

    const snapshotFile = path.join(scratch, 'stable.json');
    const dependency = freshSqlite();
    await new Migrator(dependency, [widgets]).latest();
    await checkSchemaSnapshot({ knex: dependency, namespace: notes, snapshotFile, update: true });
    const written = JSON.parse(fs.readFileSync(snapshotFile, 'utf8'));
    expect(written).to.deep.include({ format: 2, lastMigration: '1.0/01-create-notes' });
    expect(Object.keys(written.tables)).to.deep.equal(['fx_note_tags', 'fx_notes']);
    await checkSchemaSnapshot({ knex: freshSqlite(), namespace: notes, snapshotFile, update: false });
  });

  it('fails when an existing migration was edited, naming the table', async () => {
    const snapshotFile = path.join(scratch, 'edited.json');
    await checkSchemaSnapshot({ knex: freshSqlite(), namespace: notes, snapshotFile, update: true });
    const error = await rejection(
      checkSchemaSnapshot({ knex: freshSqlite(), namespace: editedNotes, snapshotFile, update: false }),
    );
    expect(error.message).to.include('The schema changed without a new migration (tables that differ: fx_notes;');
    expect(error.message).to.include('an existing migration was edited');
    expect(error.message).to.include(`run this test again with UPDATE_SCHEMA_SNAPSHOT=1`);
  });

  it('fails when migrations were added until the snapshot is refreshed with UPDATE_SCHEMA_SNAPSHOT=1', async () => {
    const snapshotFile = path.join(scratch, 'added.json');
    const released = path.join(scratch, 'widgets-1.2');
    fs.cpSync(widgets.directory, released, { recursive: true });
    fs.rmSync(path.join(released, '1.10'), { recursive: true });
    await checkSchemaSnapshot({
      knex: freshSqlite(),
      namespace: { ...widgets, directory: released },
      snapshotFile,
      update: true,
    });

    const error = await rejection(
      checkSchemaSnapshot({ knex: freshSqlite(), namespace: widgets, snapshotFile, update: false }),
    );
    expect(error.message).to.equal(
      'New migrations since the schema snapshot (it ends at 1.2/01-create-gadgets, the migrations at 1.10/01-create-gizmos): ' +
        `run this test again with UPDATE_SCHEMA_SNAPSHOT=1 (e.g. UPDATE_SCHEMA_SNAPSHOT=1 npm test) to rewrite ${snapshotFile}, and commit it together with the migration.`,
    );

    const previous = process.env.UPDATE_SCHEMA_SNAPSHOT;
    process.env.UPDATE_SCHEMA_SNAPSHOT = '1';
    try {
      await checkSchemaSnapshot({ knex: freshSqlite(), namespace: widgets, snapshotFile });
    } finally {
      if (previous === undefined) delete process.env.UPDATE_SCHEMA_SNAPSHOT;
      else process.env.UPDATE_SCHEMA_SNAPSHOT = previous;
    }
    expect(JSON.parse(fs.readFileSync(snapshotFile, 'utf8')).lastMigration).to.equal('1.10/01-create-gizmos');
    await checkSchemaSnapshot({ knex: freshSqlite(), namespace: widgets, snapshotFile, update: false });
  });

  it('fails without a snapshot, or with one of an older fingerprint format, saying to write it', async () => {
    const missing = path.join(scratch, 'missing.json');
    const error = await rejection(
      checkSchemaSnapshot({ knex: freshSqlite(), namespace: notes, snapshotFile: missing, update: false }),
    );
    expect(error.message).to.match(
      /^No schema snapshot at .*missing\.json: run this test again with UPDATE_SCHEMA_SNAPSHOT=1/,
    );

    const old = path.join(scratch, 'old.json');
    fs.writeFileSync(old, JSON.stringify({ lastMigration: '1.0/01-create-notes', hash: 'x', tables: {} }));
    const stale = await rejection(
      checkSchemaSnapshot({ knex: freshSqlite(), namespace: notes, snapshotFile: old, update: false }),
    );
    expect(stale.message).to.include(
      'was written by schema fingerprint format 1, now 2; the migrations are not at fault',
    );
  });
});
