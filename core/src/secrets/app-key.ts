import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config/load-config';
import type { AppConfig } from '../config/types';

export const APP_KEY_FILE = 'app.key';

/**
 * The key that seals secrets at rest: APP_KEY (base64 of 32 bytes). Staging and production must set it
 * (every process of a deployment shares it, and losing it loses the secrets); on a developer's machine
 * (APP_ENV=local) one is generated into the data folder on first use and kept there.
 */
export function loadAppKey(config: Pick<AppConfig, 'appEnv' | 'dataDir' | 'env'>): Buffer {
  const given = config.env.APP_KEY;
  if (given) {
    const key = Buffer.from(given, 'base64');
    if (key.length !== 32) throw new ConfigError('APP_KEY must be base64 of 32 bytes (openssl rand -base64 32)');
    return key;
  }
  if (config.appEnv !== 'local')
    throw new ConfigError(
      `APP_KEY is required when APP_ENV is ${config.appEnv}: base64 of 32 bytes (openssl rand -base64 32), the same in every process`,
    );
  const file = path.join(config.dataDir, APP_KEY_FILE);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(config.dataDir, { recursive: true });
    try {
      fs.writeFileSync(file, crypto.randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      // Another process of the same data folder wrote it first: use that one.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new ConfigError(`${file} does not hold a key of 32 bytes`);
  return key;
}
