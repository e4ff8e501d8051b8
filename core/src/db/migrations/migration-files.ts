import fs from 'node:fs';
import path from 'node:path';
import { compareVersions, majorMinor, MigrationNamespace } from './namespace';

export interface MigrationFile {
  /** `1.0/01-create-users`, as recorded in the tracking table. */
  name: string;
  version: string;
  file: string;
}

const VERSION_DIR = /^\d+\.\d+$/;
const MIGRATION_FILE = /^(\d+)-[\w.-]+\.js$/;

/** The namespace's compiled migrations, versions and then file numbers sorted numerically. */
export function loadMigrationFiles(namespace: MigrationNamespace): MigrationFile[] {
  if (!fs.existsSync(namespace.directory)) return [];
  const versions = fs
    .readdirSync(namespace.directory, { withFileTypes: true })
    .filter((d) => d.isDirectory() && VERSION_DIR.test(d.name))
    .map((d) => d.name)
    .sort(compareVersions);
  const newest = versions[versions.length - 1];
  if (newest && compareVersions(newest, majorMinor(namespace.version)) > 0) {
    throw new Error(
      `Migrations of "${namespace.id}" include version ${newest}, newer than its release ${namespace.version}: ` +
        `raise the package version or move the folder.`,
    );
  }
  return versions.flatMap((version) =>
    fs
      .readdirSync(path.join(namespace.directory, version))
      .filter((f) => MIGRATION_FILE.test(f))
      .sort((a, b) => Number(MIGRATION_FILE.exec(a)![1]) - Number(MIGRATION_FILE.exec(b)![1]))
      .map((f) => ({ name: `${version}/${f.replace(/\.js$/, '')}`, version, file: path.join(namespace.directory, version, f) })),
  );
}
