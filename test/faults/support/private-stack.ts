import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Clock, Engine, Plugin } from '@switchboard/core';
import { createTestEngine, TestBackend } from '@switchboard/core/testing';
import type { AppConfig } from '@switchboard/core';
import { PrivateMariaDb } from './private-mariadb';
import { PrivateRedis } from './private-redis';
import { CliProcess } from './cli-process';

export interface StackOptions {
  plugins: Plugin<any>[];
  /** More environment for this process's engine and every process started. */
  env?: Record<string, string>;
  /** Plugin options and the like, for this process's engine (processes read the shipped config file). */
  overrides?: Partial<AppConfig>;
  clock?: Clock;
}

/**
 * A private MariaDB and Redis, an engine in this process on them (migrated; the API and the test's
 * reads, no workers or scheduler), and `switchboard` processes on the same database, Redis, data folder
 * and APP_KEY (every process of an install opens the same sealed secrets), all ended by `dispose()`.
 */
export class PrivateStack {
  readonly processes: CliProcess[] = [];

  private constructor(
    readonly db: PrivateMariaDb,
    readonly redis: PrivateRedis,
    readonly backend: TestBackend,
    readonly engine: Engine,
    private readonly processEnv: Record<string, string>,
  ) {}

  static async start(options: StackOptions): Promise<PrivateStack> {
    const db = await PrivateMariaDb.start();
    let redis: PrivateRedis | undefined;
    try {
      redis = await PrivateRedis.start();
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-faults-data-'));
      const backend: TestBackend = {
        name: 'mysql+redis',
        databaseUrl: db.serverUrl(),
        redisUrl: redis.url,
        redisPrefix: 'faults',
        dataDir,
        dispose: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
      };
      const env = { APP_KEY: crypto.randomBytes(32).toString('base64'), ...options.env };
      const engine = await createTestEngine(backend, {
        plugins: options.plugins,
        env,
        overrides: options.overrides,
        clock: options.clock,
      });
      return new PrivateStack(db, redis, backend, engine, {
        DATABASE_URL: backend.databaseUrl,
        REDIS_URL: redis.url,
        REDIS_PREFIX: backend.redisPrefix,
        PLUGINS: options.plugins.map((p) => p.id).join(','),
        DATA_DIR: dataDir,
        ...env,
      });
    } catch (err) {
      await redis?.dispose();
      await db.dispose();
      throw err;
    }
  }

  /** The environment of a `switchboard` process on this stack. */
  env(more: Record<string, string> = {}): Record<string, string> {
    return { ...this.processEnv, ...more };
  }

  /** A `switchboard ARGS` process on this stack (not started). */
  process(args: string[], env: Record<string, string> = {}): CliProcess {
    const child = new CliProcess(args, this.env(env));
    this.processes.push(child);
    return child;
  }

  async dispose(): Promise<void> {
    for (const p of this.processes) await p.kill();
    await this.engine.close();
    await this.backend.dispose();
    await this.redis.dispose();
    await this.db.dispose();
  }
}
