export { Migrator } from './migrator';
export type { MigrationContext, MigratorOptions, NamespaceStatus } from './migrator';
export { loadMigrationFiles } from './migration-files';
export type { MigrationFile } from './migration-files';
export { compareVersions, trackingTable } from './namespace';
export type { MigrationNamespace } from './namespace';
export { SchemaGate } from './schema-gate';
export { alterTableOnce, createTableOnce, dropColumnsOnce, hasIndex } from './changes-once';
