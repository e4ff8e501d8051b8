import fs from 'node:fs';

/**
 * What the engine writes on disk (the SQLite database, generated keys, outbox mail) holds secrets or personal
 * data: only the user the engine runs as may read it, whatever the umask.
 */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/** `mkdir -p`: every folder it creates is 0700; one that exists keeps the mode its operator gave it. */
export function makePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Creates the file empty with mode 0600 unless it exists (an existing file keeps its mode). */
export function createPrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', PRIVATE_FILE_MODE));
}
