/** One set of migrations with its own tracking table: `core` or a plugin. */
export interface MigrationNamespace {
  id: string;
  /** The newest `x.y` folder it may run; a release version such as `1.2.3` counts as `1.2`. */
  version: string;
  /** Absolute path of the compiled migrations folder. */
  directory: string;
}

/** Where knex records the namespace's applied migrations; its lock table is this name plus `_lock`. */
export const trackingTable = (namespace: Pick<MigrationNamespace, 'id'>) =>
  `migrations_${namespace.id.replace(/-/g, '_')}`;

const VERSION = /^\d+(\.\d+)*$/;

export function assertVersion(value: string, what: string): void {
  if (!VERSION.test(value)) throw new Error(`${what} must be a version such as 1.2 (or 0), got "${value}"`);
}

/** Compares versions numerically: 1.10 is after 1.9, and `0` is before everything. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export const majorMinor = (version: string) => version.split('.').slice(0, 2).join('.');

/** Namespaces become table names, and two ids must never share one tracking table. */
export function assertDistinctNamespaces(namespaces: MigrationNamespace[]): void {
  const byTable = new Map<string, string>();
  for (const ns of namespaces) {
    if (!/^[A-Za-z0-9_-]+$/.test(ns.id))
      throw new Error(`Migration namespace id "${ns.id}" may only hold letters, digits, - and _`);
    assertVersion(ns.version, `The version of migration namespace "${ns.id}"`);
    const table = trackingTable(ns);
    const other = byTable.get(table);
    if (other !== undefined)
      throw new Error(`Migration namespaces "${other}" and "${ns.id}" would share the tracking table ${table}`);
    byTable.set(table, ns.id);
  }
}
