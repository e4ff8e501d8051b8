/** One set of migrations with its own tracking table: `core` or a plugin. */
export interface MigrationNamespace {
  id: string;
  /** The release version; its major.minor is the newest migrations/<x.y> folder it may hold. */
  version: string;
  /** Absolute path of the compiled migrations folder. */
  directory: string;
}

export const trackingTable = (namespace: Pick<MigrationNamespace, 'id'>) => `migrations_${namespace.id.replace(/-/g, '_')}`;

/** Compares `x.y` versions numerically: 1.10 is after 1.9. `0` sorts before everything. */
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
