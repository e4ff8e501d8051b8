import crypto from 'node:crypto';
import { AppConfig, AppError, ConfigError, localSecret } from '@switchboard/core';
import type { Logger } from '@switchboard/core';

/** The file in DATA_DIR that holds the key generated when APP_ENV=local leaves SERVER_MONITOR_API_KEY unset. */
export const MONITOR_KEY_FILE = 'server-monitor.key';
/** Staging and production refuse a shorter SERVER_MONITOR_API_KEY. */
export const MIN_KEY_LENGTH = 24;
const HOW_TO_MAKE_ONE = 'make one with `openssl rand -hex 24`';

const digest = (text: string) => crypto.createHash('sha256').update(text).digest();

/**
 * The key of the server-monitor routes, their last path segment: resolved once per engine (the plugin's
 * `register`), so the routes, the dashboard and the commands all see the same one. SERVER_MONITOR_API_KEY
 * wins; unset with APP_ENV=local, a key generated once into DATA_DIR/server-monitor.key; unset in staging or
 * production, none (every route answers 403).
 */
export class MonitorKey {
  /** Made by `resolve`. */
  constructor(
    /** Null: unset in staging or production. */
    readonly value: string | null,
    /** Set when the key is the generated one: the file that holds it, and whether this start wrote it. */
    readonly kept?: { file: string; created: boolean },
  ) {}

  /** Throws (start-up stops) on a key shorter than MIN_KEY_LENGTH in staging or production. */
  static resolve(config: Pick<AppConfig, 'appEnv' | 'dataDir' | 'env'>): MonitorKey {
    const secret = localSecret(config, {
      variable: 'SERVER_MONITOR_API_KEY',
      file: MONITOR_KEY_FILE,
      generate: () => crypto.randomBytes(24).toString('hex'),
    });
    if (!secret) return new MonitorKey(null);
    if (secret.from === 'file') {
      if (!secret.value)
        throw new ConfigError(`${secret.file} is empty: delete it for a new key, or set SERVER_MONITOR_API_KEY`);
      return new MonitorKey(secret.value, { file: secret.file, created: secret.created });
    }
    if (config.appEnv !== 'local' && secret.value.length < MIN_KEY_LENGTH)
      throw new ConfigError(
        `SERVER_MONITOR_API_KEY is ${secret.value.length} characters long; APP_ENV=${config.appEnv} needs at least ` +
          `${MIN_KEY_LENGTH}, as anyone who reaches /api/servermonitor/ may try keys: ${HOW_TO_MAKE_ONE} (48 characters)`,
      );
    return new MonitorKey(secret.value);
  }

  /** The given key is this one, compared in constant time (both sides hashed to one length first); unset, none is. */
  holds(given: string | undefined): boolean {
    if (!this.value || given === undefined) return false;
    return crypto.timingSafeEqual(digest(this.value), digest(given));
  }

  /** The spec's 403 Invalid API key unless the given key is this one. */
  require(given: string | undefined): void {
    if (!this.holds(given)) throw new AppError('AUTH_INSUFFICIENT_PERMISSIONS', 'Invalid API key');
  }

  /** At start-up: where a generated key is (never the key itself), or that no route can be called. */
  announce(logger: Logger): void {
    if (this.kept) {
      const { file, created } = this.kept;
      logger.info(
        { file },
        `SERVER_MONITOR_API_KEY is unset, so the server-monitor routes take the key ${created ? 'generated into' : 'kept in'} ` +
          `${file} as their last path segment: read it with \`cat ${file}\` or \`npx switchboard servermonitor:key\``,
      );
    } else if (!this.value) {
      logger.warn(
        `SERVER_MONITOR_API_KEY is unset: every server-monitor route answers 403 Invalid API key; ${HOW_TO_MAKE_ONE}`,
      );
    }
  }
}
