import crypto from 'node:crypto';
import { ConfigError } from '../config/load-config';
import type { AppConfig } from '../config/types';
import { localSecret } from './local-secret';

export const APP_KEY_FILE = 'app.key';

/**
 * The key that seals secrets at rest: APP_KEY (base64 of 32 bytes). Staging and production must set it
 * (every process of a deployment shares it, and losing it loses the secrets); on a developer's machine
 * (APP_ENV=local) one is generated into the data folder on first use and kept there.
 */
export function loadAppKey(config: Pick<AppConfig, 'appEnv' | 'dataDir' | 'env'>): Buffer {
  const secret = localSecret(config, {
    variable: 'APP_KEY',
    file: APP_KEY_FILE,
    generate: () => crypto.randomBytes(32).toString('base64'),
  });
  if (!secret)
    throw new ConfigError(
      `APP_KEY is required when APP_ENV is ${config.appEnv}: base64 of 32 bytes (openssl rand -base64 32), the same in every process`,
    );
  const key = Buffer.from(secret.value, 'base64');
  if (key.length === 32) return key;
  throw new ConfigError(
    secret.from === 'env'
      ? 'APP_KEY must be base64 of 32 bytes (openssl rand -base64 32)'
      : `${secret.file} does not hold a key of 32 bytes`,
  );
}
