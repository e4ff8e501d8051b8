import { createTestEngine, createTenant, productionBackend, TestBackend, TestTenant } from '@switchboard/core/testing';
import type { Engine, Plugin } from '@switchboard/core';
import { binPath, freePort } from '../src/cli';
import { startServer, stop } from './processes';

/** A fresh MariaDB database and Redis prefix, migrated for the plugins, with one tenant. */
export async function benchBackend(plugins: Plugin<any>[]): Promise<{ backend: TestBackend; engine: Engine; tenant: TestTenant; env: Record<string, string> }> {
  const backend = await productionBackend();
  if (!backend) throw new Error('benchmarks run on MariaDB and Redis: neither TEST_MYSQL_URL nor TEST_REDIS_URL may be down');
  const engine = await createTestEngine(backend, { plugins });
  const tenant = await createTenant(engine, { name: 'Bench' });
  const env = {
    DATABASE_URL: backend.databaseUrl,
    REDIS_URL: backend.redisUrl!,
    REDIS_PREFIX: backend.redisPrefix,
    DATA_DIR: backend.dataDir,
    PLUGINS: plugins.map((p) => p.id).join(','),
    RATE_LIMIT_SCALE: '1000000',
  };
  return { backend, engine, tenant, env };
}

/** `switchboard serve` (API only) as its own process on a free port. */
export async function serveSwitchboard(env: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = await startServer([binPath, 'serve', '--no-worker', '--no-scheduler', '--no-migrate'], { ...env, PORT: String(port) }, `${url}/health`);
  return { url, stop: () => stop(child) };
}
