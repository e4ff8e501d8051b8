import type { Knex } from 'knex';
import type { SecretBox } from '../../secrets/secret-box';
import { retryWhileLocked } from './lock-wait';
import { loadMigrationFiles, MigrationFile } from './migration-files';
import {
  assertDistinctNamespaces,
  assertVersion,
  compareVersions,
  MigrationNamespace,
  trackingTable,
} from './namespace';
import { clearMigrationLock, ensureTrackingTables } from './tracking-tables';

export interface NamespaceStatus {
  plugin: string;
  version: string;
  /** In the order they were applied. */
  applied: string[];
  pending: string[];
  /** Highest x.y with at least one applied migration. */
  current: string | null;
  /** Applied migrations this release has no file for: a newer release migrated the database. */
  unknown: string[];
}

export interface MigratorOptions {
  /** How long to wait for another runner's lock before failing. Default 60 s. */
  lockTimeoutMs?: number;
  /** The application key's box, for migrations that seal or open secrets (the engine gives its own). */
  secrets?: () => SecretBox;
  /** Where a runner waiting for another's lock says so, once per wait. */
  log?: { warn(message: string): void };
}

/** What a migration's `up(knex, context)` and `down(knex, context)` are given besides knex. */
export interface MigrationContext {
  /** Seals and opens secrets with the application key; reading it without one given throws. */
  readonly secrets: SecretBox;
}

interface MigrationModule {
  up(knex: Knex, context: MigrationContext): Promise<void>;
  down?(knex: Knex, context: MigrationContext): Promise<void>;
  config?: unknown;
}

interface Loaded {
  ns: MigrationNamespace;
  files: MigrationFile[];
}

/**
 * Versioned migrations per namespace on knex's own migrator: knex keeps one tracking table per namespace
 * and a lock table beside it, so concurrent runners never apply a migration twice.
 */
export class Migrator {
  constructor(
    private readonly knex: Knex,
    private readonly namespaces: MigrationNamespace[],
    private readonly options: MigratorOptions = {},
  ) {
    assertDistinctNamespaces(namespaces);
  }

  /** Applies pending migrations, namespaces in the given order; `to: 'x.y'` stops after that folder. */
  async latest(opts: { plugin?: string; to?: string } = {}): Promise<Array<{ plugin: string; applied: string[] }>> {
    const { to } = opts;
    if (to !== undefined) assertVersion(to, 'latest({ to })');
    const out = [];
    // Every namespace's files load before anything runs, so a bad folder fails before any migration.
    const loaded = this.load(opts.plugin);
    if (opts.plugin !== undefined) await this.assertEarlierMigrated(opts.plugin);
    for (const { ns, files } of loaded) await this.notNewer(ns, files);
    for (const { ns, files } of loaded) {
      const last =
        to === undefined ? files[files.length - 1] : files.filter((f) => compareVersions(f.version, to) <= 0).pop();
      if (!last) {
        out.push({ plugin: ns.id, applied: [] });
        continue;
      }
      // knex's `to` runs the pending migrations up to and including `name`, in one batch.
      const [, applied] = await this.locked(ns, () =>
        this.knex.migrate.to({ ...this.config(ns, files), name: last.name }),
      );
      out.push({ plugin: ns.id, applied: (applied as string[]).map(String) });
    }
    return out;
  }

  /**
   * Without `to`: reverts the last batch, knex's semantics per namespace: of the named plugin, or, without
   * one, of the namespaces the last `migrate` applied something to (those whose newest migration is the
   * newest of all): each namespace keeps its own batches, and the last batch of one installed long ago
   * is its whole schema (reverting every namespace's dropped the organizations and tokens of an install
   * whose last upgrade touched one plugin; session 26). With `to: 'x.y'`: reverts every applied
   * migration of a later folder, newest first; `to: '0'` reverts everything. Namespaces go in reverse
   * order, so plugins are reverted before what they depend on.
   */
  async rollback(opts: { plugin?: string; to?: string } = {}): Promise<Array<{ plugin: string; reverted: string[] }>> {
    const { to } = opts;
    if (to !== undefined) assertVersion(to, 'rollback({ to })');
    const lastMigrated = to === undefined && opts.plugin === undefined ? await this.lastMigrated() : null;
    const out = [];
    const loaded = this.load(opts.plugin).reverse();
    for (const { ns, files } of loaded) await this.notNewer(ns, files);
    for (const { ns, files } of loaded) {
      if (lastMigrated && !lastMigrated.has(ns.id)) continue;
      const config = this.config(ns, files);
      const [, reverted] = await this.locked(ns, async () => {
        if (to === undefined) return this.knex.migrate.rollback(config);
        // list() fails when an applied migration's file is gone; the narrowed source below cannot tell.
        await this.knex.migrate.list(config);
        const later = this.config(
          ns,
          files.filter((f) => compareVersions(f.version, to) > 0),
        );
        // rollback(all) reverts the applied migrations of its source, newest first, under one lock.
        return this.knex.migrate.rollback({ ...later, disableMigrationsListValidation: true }, true);
      });
      out.push({ plugin: ns.id, reverted: (reverted as string[]).map(String) });
    }
    return out;
  }

  async status(): Promise<NamespaceStatus[]> {
    const out: NamespaceStatus[] = [];
    for (const { ns, files } of this.load()) {
      const applied = await this.appliedNames(ns);
      const done = new Set(applied);
      const known = new Set(files.map((f) => f.name));
      const versions = applied.map((name) => name.split('/')[0]).sort(compareVersions);
      out.push({
        plugin: ns.id,
        version: ns.version,
        applied,
        pending: files.filter((f) => !done.has(f.name)).map((f) => f.name),
        current: versions[versions.length - 1] ?? null,
        unknown: applied.filter((name) => !known.has(name)),
      });
    }
    return out;
  }

  /**
   * One plugin migrated alone needs the namespaces before it (core, then the plugins in dependency order)
   * migrated: server monitor's migrations failed half way on a database without core's tables, and left it
   * where neither a rollback nor the plugin's own migrate went on (session 34).
   */
  private async assertEarlierMigrated(plugin: string): Promise<void> {
    const earlier = new Set(
      this.namespaces
        .slice(
          0,
          this.namespaces.findIndex((ns) => ns.id === plugin),
        )
        .map((ns) => ns.id),
    );
    const behind = (await this.status()).filter((s) => earlier.has(s.plugin) && s.pending.length).map((s) => s.plugin);
    if (behind.length)
      throw new Error(
        `Migrations of "${plugin}" come after those of ${behind.join(', ')}, which are not all applied: ` +
          `run "switchboard migrate" (every plugin, in order) first`,
      );
  }

  /** This release's migrations the database lacks, as `namespace:name` (SchemaGate). */
  async missing(): Promise<string[]> {
    return (await this.status()).flatMap((s) => s.pending.map((name) => `${s.plugin}:${name}`));
  }

  /**
   * Refuses to run migrations of a namespace whose database holds migrations this release has no file for
   * (knex said "the migration directory is corrupt"): a newer release migrated it, and only that release
   * knows how to go on or back.
   */
  private notNewer(ns: MigrationNamespace, files: MigrationFile[]): Promise<void> {
    // A runner migrating meanwhile may hold SQLite's write lock (SQLITE_BUSY): read again, as the lock waits.
    const timeoutMs = this.options.lockTimeoutMs ?? 60_000;
    return retryWhileLocked(
      () => this.assertNotNewer(ns, files),
      timeoutMs,
      (last) => last,
    );
  }

  private async assertNotNewer(ns: MigrationNamespace, files: MigrationFile[]): Promise<void> {
    const known = new Set(files.map((f) => f.name));
    const unknown = (await this.appliedNames(ns)).filter((name) => !known.has(name));
    if (!unknown.length) return;
    const release = ns.version.split('.').slice(0, 2).join('.');
    // `--to X.Y` keeps every migration of X.Y: those a later build added within this release's X.Y are
    // reverted by the bare rollback of the run that applied them.
    const within = unknown.some((name) => compareVersions(name.split('/')[0], release) <= 0);
    const back = within
      ? `"switchboard migrate:rollback --plugin ${ns.id}" (the last run's migrations; again for the run before)`
      : `"switchboard migrate:rollback --plugin ${ns.id} --to ${release}"`;
    throw new Error(
      `Migrations of "${ns.id}": the database holds ${unknown.join(', ')}, which release ${ns.version} does not have: ` +
        `a newer release migrated it. Run this command with that release; to come back to this one, roll back ` +
        `with the newer release first: ${back}.`,
    );
  }

  /** Clears a lock left by a runner that was killed mid-migration. */
  async unlock(plugin?: string): Promise<string[]> {
    const cleared = [];
    for (const ns of this.select(plugin)) {
      await clearMigrationLock(this.knex, trackingTable(ns));
      cleared.push(ns.id);
    }
    return cleared;
  }

  /**
   * The namespaces whose newest applied migration is the newest of all, to the second (MariaDB's tracking
   * tables keep seconds; SQLite's milliseconds are cut alike): the last `migrate` run's. Run again, the
   * rollback goes on to the run before.
   */
  private async lastMigrated(): Promise<Set<string>> {
    const newest = new Map<string, number>();
    for (const { ns } of this.load()) {
      const table = trackingTable(ns);
      if (!(await this.knex.schema.hasTable(table))) continue;
      const [{ at }] = await this.knex(table).max({ at: 'migration_time' });
      const time = at === null || at === undefined ? NaN : new Date(at as string | number | Date).getTime();
      if (!Number.isNaN(time)) newest.set(ns.id, Math.floor(time / 1000));
    }
    const latest = Math.max(...newest.values());
    return new Set([...newest].filter(([, time]) => time === latest).map(([id]) => id));
  }

  /** Read-only: status does not create the tracking tables. */
  private async appliedNames(ns: MigrationNamespace): Promise<string[]> {
    const table = trackingTable(ns);
    if (!(await this.knex.schema.hasTable(table))) return [];
    const rows: Array<{ name: string }> = await this.knex(table).select('name').orderBy('id');
    return rows.map((r) => r.name);
  }

  private load(plugin?: string): Loaded[] {
    return this.select(plugin).map((ns) => ({ ns, files: loadMigrationFiles(ns) }));
  }

  private select(plugin?: string): MigrationNamespace[] {
    if (plugin === undefined) return this.namespaces;
    const ns = this.namespaces.find((n) => n.id === plugin);
    if (!ns)
      throw new Error(
        `Unknown plugin "${plugin}" for migrations; known: ${this.namespaces.map((n) => n.id).join(', ')}`,
      );
    return [ns];
  }

  private config(ns: MigrationNamespace, files: MigrationFile[]): Knex.MigratorConfig {
    return {
      tableName: trackingTable(ns),
      migrationSource: {
        getMigrations: async () => files,
        getMigrationName: (m: MigrationFile) => m.name,
        getMigration: async (m: MigrationFile) => this.withContext(require(m.file) as MigrationModule),
      },
    };
  }

  /** knex calls `up(knex)`: the context goes in as the second argument. */
  private withContext(migration: MigrationModule): Knex.Migration {
    const { secrets } = this.options;
    const context: MigrationContext = {
      get secrets(): SecretBox {
        if (!secrets) throw new Error('This migration needs the application key: run it through the engine');
        return secrets();
      },
    };
    return {
      ...migration,
      up: (knex) => migration.up(knex, context),
      ...(migration.down && { down: (knex: Knex) => migration.down!(knex, context) }),
    } as Knex.Migration;
  }

  private locked<T>(ns: MigrationNamespace, run: () => Promise<T>): Promise<T> {
    const timeoutMs = this.options.lockTimeoutMs ?? 60_000;
    const table = trackingTable(ns);
    return retryWhileLocked(
      async () => {
        await ensureTrackingTables(this.knex, table);
        return run();
      },
      timeoutMs,
      (last) =>
        new Error(
          `Migrations of "${ns.id}" stayed locked by another runner for ${timeoutMs / 1000} s (${table}_lock; ${last.message}). ` +
            `If no runner is migrating (one was killed mid-migration), clear the lock with ` +
            `"switchboard migrate:unlock --plugin ${ns.id}" and migrate again.`,
        ),
      () =>
        this.options.log?.warn(
          `Migrations of "${ns.id}": another runner holds the lock (${table}_lock); waiting up to ${timeoutMs / 1000} s for it`,
        ),
    ).catch((err: Error) => {
      if (err.message.startsWith(`Migrations of "${ns.id}"`)) throw err;
      throw new Error(`Migrations of "${ns.id}": ${err.message}`, { cause: err });
    });
  }
}
