import crypto from 'node:crypto';
import type { AppConfig } from '../config/types';
import { loadConfig } from '../config/load-config';
import { Engine } from '../engine/engine';
import type { Plugin } from '../plugin/types';
import { OrganizationService, Plan } from '../auth/organizations';
import { ApiTokenService } from '../auth/api-tokens';
import type { Clock } from '../clock';
import type { Logger } from '../logger';
import type { TestBackend } from './services';
import { keepMigrated, restoreMigrated } from './migrated-copies';

export interface TestEngineOptions {
  plugins?: Plugin<any>[];
  env?: Record<string, string>;
  overrides?: Partial<AppConfig>;
  clock?: Clock;
  /** Instead of a logger at LOG_LEVEL (silent by default): e.g. one that records what is logged. */
  logger?: Logger;
  migrate?: boolean;
}

const TEST_APP_KEY = crypto.randomBytes(32).toString('base64');

/** A migrated engine on the backend with the given plugin objects enabled (no npm resolution). */
export async function createTestEngine(backend: TestBackend, options: TestEngineOptions = {}): Promise<Engine> {
  const plugins = options.plugins ?? [];
  const config = loadConfig({
    file: false,
    env: {
      DATABASE_URL: backend.databaseUrl,
      ...(backend.redisUrl ? { REDIS_URL: backend.redisUrl } : {}),
      REDIS_PREFIX: backend.redisPrefix,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      PLUGINS: plugins.map((p) => p.id).join(','),
      DATA_DIR: backend.dataDir,
      // One key for every engine of the run: staging and production need one, and engines of one backend share secrets.
      APP_KEY: TEST_APP_KEY,
      ...(options.env ?? {}),
    },
    overrides: options.overrides,
  });
  const byPackage = new Map(plugins.map((p) => [`@switchboard/plugin-${p.id}`, p]));
  // A database migrated as this one would be is copied instead (migrated-copies.ts); the migrator then finds
  // nothing to run.
  const copyKey =
    // Without APP_KEY each backend makes its own key (DATA_DIR): a copy would hold secrets sealed with another's.
    options.migrate === false || config.databaseUrl !== backend.databaseUrl || !config.env.APP_KEY
      ? null
      : migratedKey(backend, config, byPackage);
  const before = copyKey === null ? 'used' : await restoreMigrated(backend, copyKey);
  const engine = await Engine.create(config, {
    clock: options.clock,
    logger: options.logger,
    resolvePlugin: (pkg) => byPackage.get(pkg),
    checkResponses: true,
  });
  if (options.migrate !== false) await engine.migrator().latest();
  if (before === 'empty') await keepMigrated(engine.knex, copyKey!);
  return engine;
}

/** What migrations see (migrator.ts): the database, the enabled plugins' migrations and the application key. */
const migratedKey = (backend: TestBackend, config: AppConfig, byPackage: Map<string, Plugin<any>>) =>
  JSON.stringify([
    backend.name,
    config.plugins.map(({ id, package: pkg }) => {
      const plugin = byPackage.get(pkg);
      return [id, pkg, plugin?.version, plugin?.migrationsDir];
    }),
    config.env.APP_KEY,
  ]);

export interface TestTenant {
  organizationId: number;
  tokenId: number;
  token: string;
  auth: { Authorization: string };
}

/** An organization with one token (all permissions unless told otherwise). */
export async function createTenant(
  engine: Engine,
  options: { name?: string; plan?: Plan; permissions?: string[]; ipAllowlist?: string[]; expiresAt?: Date } = {},
): Promise<TestTenant> {
  const org = await engine.container
    .resolve(OrganizationService)
    .create({ name: options.name ?? 'Acme', plan: options.plan });
  const { token, info } = await engine.container.resolve(ApiTokenService).create(org.id, {
    name: 'test',
    permissions: options.permissions ?? ['*'],
    ipAllowlist: options.ipAllowlist,
    expiresAt: options.expiresAt,
  });
  return { organizationId: org.id, tokenId: info.id, token, auth: { Authorization: `Bearer ${token}` } };
}

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private current = new Date('2026-01-01T00:00:00Z')) {}
  now(): Date {
    return new Date(this.current);
  }
  set(date: Date): void {
    this.current = new Date(date);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}
