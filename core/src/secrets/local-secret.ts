import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AppConfig } from '../config/types';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../private-files';

/** Where a secret came from: its environment variable, or the file kept in the data folder. */
export type LocalSecret =
  | { value: string; from: 'env' }
  | {
      value: string;
      from: 'file';
      /** Absolute path of the file that holds it. */
      file: string;
      /** Written by this call (the first start on this data folder), not found there. */
      created: boolean;
    };

export interface LocalSecretSpec {
  /** The environment variable that gives it; set, it wins. */
  variable: string;
  /** The file's name in DATA_DIR. */
  file: string;
  /** A new value, for the first start (written once, mode 0600). */
  generate: () => string;
}

/**
 * A secret a deployment sets in its environment; on a developer's machine (APP_ENV=local) without it, one
 * generated into the data folder on first use and kept there, so nothing has to be set before `npm start`.
 * Null in staging and production when the variable is unset: the caller decides whether that stops start-up.
 */
export function localSecret(
  config: Pick<AppConfig, 'appEnv' | 'dataDir' | 'env'>,
  spec: LocalSecretSpec,
): LocalSecret | null {
  const given = config.env[spec.variable];
  if (given) return { value: given, from: 'env' };
  if (config.appEnv !== 'local') return null;
  const file = path.resolve(config.dataDir, spec.file);
  const created = !fs.existsSync(file) && createOnce(file, spec.generate());
  return { value: fs.readFileSync(file, 'utf8').trim(), from: 'file', file, created };
}

/**
 * Writes the file whole or not at all: a temporary file linked to its name, which fails when another process
 * of the same data folder linked its own first (then that one is used). False when it lost that race.
 */
function createOnce(file: string, value: string): boolean {
  makePrivateDir(path.dirname(file));
  const temporary = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  try {
    // Inside the try: a full disk fails the write after the file was made, and it must go too.
    fs.writeFileSync(temporary, value, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    fs.linkSync(temporary, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return false;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
}
