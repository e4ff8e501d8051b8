import fs from 'node:fs';
import path from 'node:path';
import { compareVersions, majorMinor, MigrationNamespace } from './namespace';

export interface MigrationFile {
  /** `1.0/01-create-users`, as recorded in the tracking table. */
  name: string;
  /** The `x.y` folder it is in. */
  version: string;
  file: string;
}

const VERSION_DIR = /^\d+\.\d+$/;
const MIGRATION_FILE = /^(\d+)-[\w.-]+\.js$/;
// What tsc writes beside each compiled migration, and hidden files such as .DS_Store.
const IGNORED = /\.(d\.ts|map)$|^\./;

/** The namespace's compiled migrations: version folders, then files by leading number, sorted numerically. */
export function loadMigrationFiles(namespace: MigrationNamespace): MigrationFile[] {
  const { id, directory } = namespace;
  if (!fs.existsSync(directory))
    throw new Error(`Migrations folder of "${id}" not found: ${directory} (is the package built?)`);
  const versions = fs
    .readdirSync(directory, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  const misnamed = versions.find((v) => !VERSION_DIR.test(v));
  if (misnamed)
    throw new Error(`Migrations of "${id}": folder ${path.join(directory, misnamed)} is not named like x.y (e.g. 1.2)`);
  versions.sort(compareVersions);

  const newest = versions[versions.length - 1];
  const allowed = majorMinor(namespace.version);
  if (newest && compareVersions(newest, allowed) > 0) {
    throw new Error(
      `Migrations of "${id}" include folder ${newest}, newer than its version ${namespace.version} allows (${allowed}): ` +
        `raise the version to ${newest} or move the migrations into an older folder.`,
    );
  }
  return versions.flatMap((version) => versionFiles(id, directory, version));
}

function versionFiles(id: string, directory: string, version: string): MigrationFile[] {
  const folder = path.join(directory, version);
  // Beside its sources (a checkout), a compiled migration without one is a build's leftover (a migration
  // renamed or moved since): it would run again under its old name, or collide. tsc leaves such files.
  const sources = path.join(directory.replace(/([\\/])dist([\\/]migrations)$/, '$2'), version);
  const checked = sources !== folder && fs.existsSync(sources);
  const numbered = fs
    .readdirSync(folder)
    .filter((f) => !IGNORED.test(f))
    .map((f) => {
      const source = path.join(sources, f.replace(/\.js$/, '.ts'));
      if (checked && MIGRATION_FILE.test(f) && !fs.existsSync(source))
        throw new Error(
          `Migrations of "${id}": ${path.join(folder, f)} has no source ${source}: a stale build. Run npm run clean, then npm start (or npm run build)`,
        );
      const match = MIGRATION_FILE.exec(f);
      if (!match)
        throw new Error(`Migrations of "${id}": ${path.join(folder, f)} is not a compiled migration named NN-name.js`);
      return { number: Number(match[1]), f };
    })
    .sort((a, b) => a.number - b.number);
  numbered.forEach(({ number, f }, i) => {
    if (i > 0 && numbered[i - 1].number === number) {
      throw new Error(
        `Migrations of "${id}": ${numbered[i - 1].f} and ${f} in ${folder} share the number ${number}, so their order is undefined`,
      );
    }
  });
  return numbered.map(({ f }) => ({
    name: `${version}/${f.slice(0, -'.js'.length)}`,
    version,
    file: path.join(folder, f),
  }));
}
