import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { createKnex } from '../db/knex';
import { createClient } from 'redis';

/** Where a test suite runs: the embedded default, or the production drivers (MySQL + Redis). */
export interface TestBackend {
  name: 'embedded' | 'mysql+redis';
  databaseUrl: string;
  redisUrl?: string;
  /** Unique per suite so that suites sharing one Redis never see each other's keys. */
  redisPrefix: string;
  /** DATA_DIR of engines on this backend (outbox mail), removed by dispose(). */
  dataDir: string;
  /** Drops the database (MySQL) or deletes the file (SQLite) and the Redis keys. */
  dispose(): Promise<void>;
}

export const servicesRequired = () => process.env.REQUIRE_SERVICES === '1';
const testMysqlUrl = () => process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
const testRedisUrl = () => process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export const uniqueSuffix = () => `${process.pid}_${crypto.randomBytes(4).toString('hex')}`;

export function embeddedBackend(): TestBackend {
  const suffix = uniqueSuffix();
  const file = path.join(os.tmpdir(), `switchboard-test-${suffix}.sqlite`);
  const dataDir = path.join(os.tmpdir(), `switchboard-data-${suffix}`);
  return {
    name: 'embedded',
    databaseUrl: `sqlite:${file}`,
    redisPrefix: `sbt_${suffix}`,
    dataDir,
    async dispose() {
      for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A fresh MySQL database on the TEST_MYSQL_URL server; throws when the server does not answer. */
export async function createMysqlDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const base = new URL(testMysqlUrl());
  const name = `sbt_${uniqueSuffix()}`;
  const admin = createKnex(base.toString());
  try {
    await admin.raw(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  } finally {
    await admin.destroy();
  }
  const url = new URL(base.toString());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const k = createKnex(base.toString());
      try {
        await k.raw(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await k.destroy();
      }
    },
  };
}

export async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<void> {
  const client = createClient({ url: redisUrl });
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) {
      const batch = Array.isArray(keys) ? keys : [keys];
      if (batch.length) await client.del(batch);
    }
  } finally {
    await client.quit();
  }
}

export async function redisAnswers(redisUrl = testRedisUrl()): Promise<boolean> {
  const client = createClient({ url: redisUrl, socket: { connectTimeout: 1000, reconnectStrategy: false } });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
    await client.quit();
    return true;
  } catch {
    return false;
  }
}

/** The Redis to test on, or null to skip; with REQUIRE_SERVICES=1 a Redis that does not answer throws. */
export async function requiredRedisUrl(): Promise<string | null> {
  if (await redisAnswers()) return testRedisUrl();
  if (servicesRequired()) throw new Error(`REQUIRE_SERVICES=1 but Redis at ${testRedisUrl()} does not answer`);
  return null;
}

/**
 * MySQL + Redis backend, or null when they do not answer (then the caller skips the suite).
 * With REQUIRE_SERVICES=1 an unreachable server throws, so CI cannot pass by skipping.
 */
export async function productionBackend(): Promise<TestBackend | null> {
  let db: { url: string; drop(): Promise<void> };
  try {
    db = await createMysqlDatabase();
  } catch (err) {
    if (servicesRequired())
      throw new Error(`REQUIRE_SERVICES=1 but MySQL at ${testMysqlUrl()} failed: ${(err as Error).message}`);
    return null;
  }
  const redisUrl = await requiredRedisUrl().catch(async (err) => {
    await db.drop();
    throw err;
  });
  if (!redisUrl) {
    await db.drop();
    return null;
  }
  const suffix = uniqueSuffix();
  const redisPrefix = `sbt_${suffix}`;
  const dataDir = path.join(os.tmpdir(), `switchboard-data-${suffix}`);
  return {
    name: 'mysql+redis',
    databaseUrl: db.url,
    redisUrl,
    redisPrefix,
    dataDir,
    async dispose() {
      await db.drop();
      await deleteRedisKeys(redisUrl, redisPrefix);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Declares the suite twice: on the embedded default and on MySQL + Redis. The body reads the
 * backend through the getter inside hooks and tests (it is created in a before hook).
 */
export function describeEachBackend(title: string, body: (backend: () => TestBackend) => void): void {
  const factories: Array<[string, () => Promise<TestBackend | null>]> = [
    ['embedded', async () => embeddedBackend()],
    ['mysql+redis', productionBackend],
  ];
  for (const [name, factory] of factories) {
    describe(`${title} [${name}]`, function () {
      let backend: TestBackend | null = null;
      before(async function () {
        backend = await factory();
        if (!backend) this.skip();
      });
      body(() => {
        if (!backend) throw new Error('backend not ready');
        return backend;
      });
      // Declared after the body so that the body's own after hooks (closing pools) run first.
      after(async () => {
        await backend?.dispose();
      });
    });
  }
}
