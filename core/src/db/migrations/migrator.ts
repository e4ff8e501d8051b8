import type { Knex } from 'knex';
import { loadMigrationFiles, MigrationFile } from './migration-files';
import { compareVersions, MigrationNamespace, trackingTable } from './namespace';

export interface NamespaceStatus {
  plugin: string;
  version: string;
  applied: string[];
  pending: string[];
  /** Highest x.y with an applied migration. */
  current: string | null;
}

const LOCK_WAIT_MS = 60_000;

/**
 * Versioned migrations per namespace on knex's own migrator: one tracking table per namespace and
 * knex's lock table beside it, so two runners never apply the same migration.
 */
export class Migrator {
  constructor(
    private readonly knex: Knex,
    private readonly namespaces: MigrationNamespace[],
  ) {}

  async latest(opts: { plugin?: string; to?: string } = {}): Promise<Array<{ plugin: string; applied: string[] }>> {
    const out = [];
    for (const ns of this.select(opts.plugin)) {
      const files = loadMigrationFiles(ns).filter((f) => !opts.to || compareVersions(f.version, opts.to) <= 0);
      const [, applied] = await this.withLockRetry(() => this.knex.migrate.latest(this.config(ns, files)));
      out.push({ plugin: ns.id, applied: (applied as string[]).map(String) });
    }
    return out;
  }

  async rollback(opts: { plugin?: string; to?: string } = {}): Promise<Array<{ plugin: string; reverted: string[] }>> {
    const out = [];
    for (const ns of [...this.select(opts.plugin)].reverse()) {
      const files = loadMigrationFiles(ns);
      if (opts.to === undefined) {
        const [, reverted] = await this.withLockRetry(() => this.knex.migrate.rollback(this.config(ns, files)));
        out.push({ plugin: ns.id, reverted: (reverted as string[]).map(String) });
        continue;
      }
      const reverted: string[] = [];
      const versionOf = new Map(files.map((f) => [f.name, f.version]));
      for (;;) {
        const applied = await this.appliedNames(ns);
        const last = applied[applied.length - 1];
        if (!last || compareVersions(versionOf.get(last) ?? last.split('/')[0], opts.to) <= 0) break;
        const [, names] = await this.withLockRetry(() => this.knex.migrate.down(this.config(ns, files)));
        reverted.push(...(names as string[]).map(String));
      }
      out.push({ plugin: ns.id, reverted });
    }
    return out;
  }

  async status(): Promise<NamespaceStatus[]> {
    const out: NamespaceStatus[] = [];
    for (const ns of this.namespaces) {
      const files = loadMigrationFiles(ns);
      const applied = await this.appliedNames(ns);
      const done = new Set(applied);
      const versions = applied.map((n) => n.split('/')[0]).sort(compareVersions);
      out.push({
        plugin: ns.id,
        version: ns.version,
        applied,
        pending: files.filter((f) => !done.has(f.name)).map((f) => f.name),
        current: versions[versions.length - 1] ?? null,
      });
    }
    return out;
  }

  /** Clears a lock left by a runner that was killed mid-migration. */
  async unlock(plugin?: string): Promise<string[]> {
    const cleared = [];
    for (const ns of this.select(plugin)) {
      await this.knex.migrate.forceFreeMigrationsLock(this.config(ns, []));
      cleared.push(ns.id);
    }
    return cleared;
  }

  private async appliedNames(ns: MigrationNamespace): Promise<string[]> {
    const table = trackingTable(ns);
    if (!(await this.knex.schema.hasTable(table))) return [];
    const rows = await this.knex(table).select('name').orderBy('id');
    return rows.map((r: { name: string }) => r.name);
  }

  private select(plugin?: string): MigrationNamespace[] {
    if (!plugin) return this.namespaces;
    const ns = this.namespaces.find((n) => n.id === plugin);
    if (!ns) throw new Error(`Unknown plugin "${plugin}" for migrations; known: ${this.namespaces.map((n) => n.id).join(', ')}`);
    return [ns];
  }

  private config(ns: MigrationNamespace, files: MigrationFile[]): Knex.MigratorConfig {
    return {
      tableName: trackingTable(ns),
      // A subset of the files (with --to) is a valid source: applied names beyond it are not an error.
      disableMigrationsListValidation: true,
      migrationSource: {
        getMigrations: async () => files,
        getMigrationName: (m: MigrationFile) => m.name,
        getMigration: async (m: MigrationFile) => require(m.file),
      },
    };
  }

  /** knex refuses at once while another runner holds the lock; wait for it instead. */
  private async withLockRetry<T>(run: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        return await run();
      } catch (err) {
        const locked = (err as Error).name === 'MigrationLocked' || /already locked/i.test((err as Error).message);
        if (!locked || Date.now() > deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
      }
    }
  }
}
