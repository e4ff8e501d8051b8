import fs from 'node:fs';
import path from 'node:path';
import { AppConfig, AppEnv, MailConfig, PluginConfig } from './types';
import { ConfigFile, configFileSchema } from './config-file.schema';
import { settingsAjv } from './settings-ajv';
import { compileOnce } from '../schemas/compile-once';
import { DEFAULT_OUTBOX_KEEP } from '../mail/outbox';
import { withoutPassword } from './without-password';

/** The URL of a listen address: an IPv6 one is bracketed. */
export const listenUrl = (host: string, port: number): string =>
  `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const APP_ENVS: AppEnv[] = ['local', 'staging', 'production'];

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  /**
   * Path of the config file; default SWITCHBOARD_CONFIG, or ./config/switchboard.json, or when the working
   * directory has none the installation's own config/switchboard.json; false reads none.
   */
  file?: string | false;
  /** Applied last; tests use it. */
  overrides?: Partial<AppConfig>;
}

function readConfigFile(file: string, explicit: boolean): ConfigFile {
  if (!fs.existsSync(file)) {
    if (explicit) throw new ConfigError(`Config file ${file} does not exist`);
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`Config file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const validate = compileOnce(settingsAjv(), configFileSchema);
  if (!validate(parsed)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
    throw new ConfigError(`Config file ${file} is invalid: ${problems}`);
  }
  return parsed as ConfigFile;
}

function positiveNumber(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new ConfigError(`${name} must be a positive number, got "${raw}"`);
  return n;
}

function wholeNumber(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0)
    throw new ConfigError(`${name} must be a whole number (0 or more), got "${raw}"`);
  return n;
}

function enabledPlugins(file: ConfigFile, pluginsEnv: string | undefined): PluginConfig[] {
  const declared = file.plugins ?? {};
  const ids =
    pluginsEnv !== undefined && pluginsEnv.trim() !== ''
      ? pluginsEnv
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : Object.keys(declared).filter((id) => declared[id].enabled !== false);
  return ids.map((id) => ({
    id,
    package: declared[id]?.package ?? `@switchboard/plugin-${id}`,
    options: declared[id]?.options ?? {},
    rateLimits: declared[id]?.rateLimits,
  }));
}

export function loadConfig(options: LoadConfigOptions = {}): AppConfig {
  // An empty variable means unset, as in most shells' and process managers' conventions.
  const env = Object.fromEntries(
    Object.entries(options.env ?? process.env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
  );
  const explicitFile = options.file ?? env.SWITCHBOARD_CONFIG;
  const fileConfig =
    explicitFile === false
      ? {}
      : explicitFile !== undefined
        ? readConfigFile(path.resolve(explicitFile), true)
        : readConfigFile(defaultConfigFile(), false);

  const appEnv = (env.APP_ENV ?? 'local') as AppEnv;
  if (!APP_ENVS.includes(appEnv))
    throw new ConfigError(`APP_ENV must be one of ${APP_ENVS.join(', ')}, got "${appEnv}"`);
  const host = env.HOST ?? '127.0.0.1';
  const port = env.PORT === undefined ? 3000 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`PORT must be a port number, got "${env.PORT}"`);
  const dataDir = path.resolve(env.DATA_DIR ?? 'data');
  const hostUrl = listenUrl(host, port);
  if (env.PUBLIC_URL === undefined && !URL.canParse(hostUrl))
    throw new ConfigError(`HOST must be a host name or IP address, got "${host}"`);
  const publicUrl = urlOf('PUBLIC_URL', env.PUBLIC_URL ?? hostUrl, ['http:', 'https:']);
  if (env.REDIS_URL) urlOf('REDIS_URL', env.REDIS_URL, ['redis:', 'rediss:']);
  if (env.SMTP_URL) urlOf('SMTP_URL', env.SMTP_URL, ['smtp:', 'smtps:']);
  if (env.LOG_LEVEL !== undefined && !LOG_LEVELS.includes(env.LOG_LEVEL))
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);

  const config: AppConfig = {
    version: readOwnVersion(),
    appEnv,
    host,
    port,
    publicUrl: publicUrl.replace(/\/$/, ''),
    publicUrlGiven: env.PUBLIC_URL !== undefined,
    databaseUrl: env.DATABASE_URL
      ? databaseUrlOf(env.DATABASE_URL)
      : `sqlite:${path.join(dataDir, 'switchboard.sqlite')}`,
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: env.REDIS_PREFIX ?? 'sb',
    dataDir,
    smtpUrl: env.SMTP_URL || undefined,
    outboxDir: path.join(dataDir, 'outbox'),
    outboxKeep: wholeNumber('OUTBOX_KEEP', env.OUTBOX_KEEP, DEFAULT_OUTBOX_KEEP),
    mail: mailConfig(fileConfig),
    logLevel: env.LOG_LEVEL ?? 'info',
    plugins: enabledPlugins(fileConfig, env.PLUGINS),
    rateLimitScale: positiveNumber('RATE_LIMIT_SCALE', env.RATE_LIMIT_SCALE, 1),
    planRateLimits: fileConfig.rateLimits?.plans ?? {},
    tokenRateLimits: fileConfig.rateLimits?.tokens ?? {},
    trustedProxies: fileConfig.http?.trustedProxies ?? [],
    bodyLimit: fileConfig.http?.bodyLimit ?? '1mb',
    tokenCacheSeconds: fileConfig.http?.tokenCacheSeconds ?? 10,
    shutdownTimeoutMs: fileConfig.http?.shutdownTimeoutMs ?? 10000,
    env,
  };
  return { ...config, ...(options.overrides ?? {}) };
}

/** The config file's `mail` section, DKIM keys read from their files (a key that cannot be read stops start-up). */
function mailConfig(file: ConfigFile): MailConfig {
  const dkim = (file.mail?.dkim ?? []).map(({ domain, selector, privateKeyFile }) => {
    try {
      return {
        domain: domain.toLowerCase(),
        selector,
        privateKey: fs.readFileSync(path.resolve(privateKeyFile), 'utf8'),
      };
    } catch (err) {
      throw new ConfigError(
        `mail.dkim: the key of ${domain} (${privateKeyFile}) cannot be read: ${(err as Error).message}`,
      );
    }
  });
  return {
    maxConnections: file.mail?.maxConnections ?? 5,
    messagesPerSecond: file.mail?.messagesPerSecond,
    sendTimeoutMs: file.mail?.sendTimeoutMs,
    dkim,
  };
}

function readOwnVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * The working directory's config/switchboard.json, else the one the installation ships (beside core): a
 * command run from another directory enables the shipped plugins (PLUGINS' documented default) instead of
 * none.
 */
function defaultConfigFile(): string {
  const here = path.resolve('config/switchboard.json');
  return fs.existsSync(here) ? here : path.join(__dirname, '../../../../config/switchboard.json');
}

/** pino's levels, and `silent`. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** `value` if it is a URL of one of these protocols; otherwise a ConfigError naming the variable. */
function urlOf(name: string, value: string, protocols: string[]): string {
  let url: URL;
  const shown = withoutPassword(value);
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be a URL (${protocols.map((p) => `${p}//...`).join(' or ')}), got "${shown}"`);
  }
  if (!protocols.includes(url.protocol))
    throw new ConfigError(`${name} must be a ${protocols.map((p) => `${p}//`).join(' or ')} URL, got "${shown}"`);
  return value;
}

/**
 * DATABASE_URL as the drivers take it, refused at start naming it: a MySQL URL that names no database
 * failed every statement with "No database selected", a port that is no number said "Invalid URL", and
 * `sqlite:` alone was a database in memory, lost at exit (session 34).
 */
function databaseUrlOf(value: string): string {
  if (value.startsWith('sqlite:')) {
    if (!value.slice('sqlite:'.length).trim())
      throw new ConfigError('DATABASE_URL sqlite: needs a file (sqlite:./data/switchboard.sqlite, or sqlite::memory:)');
    return value;
  }
  if (!/^(mysql|mariadb):/.test(value))
    throw new ConfigError(
      `DATABASE_URL must start with sqlite: (a file), mysql:// or mariadb://, got "${withoutPassword(value)}"`,
    );
  const url = new URL(urlOf('DATABASE_URL', value, ['mysql:', 'mariadb:']));
  if (!url.pathname.replace(/^\//, ''))
    throw new ConfigError('DATABASE_URL must name a database: mysql://user:password@host:3306/switchboard');
  return value;
}
