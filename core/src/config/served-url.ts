import fs from 'node:fs';
import path from 'node:path';
import { makePrivateDir } from '../private-files';
import type { AppConfig } from './types';

const FILE = 'served-url.json';

/**
 * `serve` records the URL it is reached at in DATA_DIR, so that the commands and processes beside it (a
 * heartbeat's ping URL, a worker's mail links) name the same one when PUBLIC_URL is not set in their own
 * environment: `PORT=3100 npm start`, then `npx switchboard servermonitor:heartbeat:create` prints port 3100.
 */
export function recordServedUrl(config: AppConfig): void {
  try {
    makePrivateDir(config.dataDir);
    fs.writeFileSync(path.join(config.dataDir, FILE), `${JSON.stringify({ public_url: config.publicUrl })}\n`);
  } catch {
    // A read-only data folder: the other processes fall back to HOST:PORT, as before.
  }
}

/** The config of a process other than `serve`: PUBLIC_URL when set, else what `serve` recorded, else HOST:PORT. */
export function withServedUrl(config: AppConfig): AppConfig {
  if (config.publicUrlGiven) return config;
  try {
    const recorded = JSON.parse(fs.readFileSync(path.join(config.dataDir, FILE), 'utf8')) as { public_url?: unknown };
    if (typeof recorded.public_url === 'string' && /^https?:\/\//.test(recorded.public_url))
      return { ...config, publicUrl: recorded.public_url.replace(/\/$/, '') };
  } catch {
    // Nothing recorded (no serve ran with this data folder): HOST:PORT.
  }
  return config;
}

/** Whether a `serve` recorded its URL in this data folder. */
export function servedUrlRecorded(config: AppConfig): boolean {
  return fs.existsSync(path.join(config.dataDir, FILE));
}
