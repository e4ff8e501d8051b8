import type { Engine } from '../engine/engine';
import type { Plugin } from '../plugin/types';
import { createTestEngine, createTenant, TestTenant } from './engine';
import { embeddedBackend, productionBackend, TestBackend } from './services';

/** What the harness (`npm run bench -- NAME`) gives a benchmark, wherever the benchmark lives. */
export interface BenchOptions {
  /** A reduced size that runs in a few minutes (the monitor: 10, one whole free-plan window). */
  quick: boolean;
  /** Progress lines (stderr): stdout ends with the benchmark's one JSON object. */
  log(line: string): void;
  /** Also the larger sizes a benchmark names for `--full`. */
  full?: boolean;
  /**
   * `switchboard serve` as its own process on a free port, with this environment: API only, or with
   * `everything` also the queue workers and the scheduler (the embedded default's one process).
   */
  serve(
    env: Record<string, string>,
    options?: { everything?: boolean },
  ): Promise<{ url: string; pid: number; stop(): Promise<void> }>;
  /** `switchboard worker` (queue workers only) as its own process, with this environment. */
  worker(env: Record<string, string>): Promise<{ pid: number; stop(): Promise<void> }>;
  /** `switchboard ARGS --json` as its own process, with this environment: the JSON object it printed. */
  command(args: string[], env: Record<string, string>): Promise<any>;
}

export type Benchmark = (options: BenchOptions) => Promise<Record<string, unknown>>;

/**
 * A fresh MariaDB database and Redis prefix (or, with `embedded`, a fresh SQLite file and no Redis),
 * migrated for the plugins, with one tenant.
 */
export async function benchBackend(
  plugins: Plugin<any>[],
  options: { embedded?: boolean } = {},
): Promise<{ backend: TestBackend; engine: Engine; tenant: TestTenant; env: Record<string, string> }> {
  const backend = options.embedded ? embeddedBackend() : await productionBackend();
  if (!backend)
    throw new Error('benchmarks run on MariaDB and Redis: neither TEST_MYSQL_URL nor TEST_REDIS_URL may be down');
  const engine = await createTestEngine(backend, { plugins });
  const tenant = await createTenant(engine, { name: 'Bench' });
  const env: Record<string, string> = {
    DATABASE_URL: backend.databaseUrl,
    ...(backend.redisUrl ? { REDIS_URL: backend.redisUrl } : {}),
    REDIS_PREFIX: backend.redisPrefix,
    DATA_DIR: backend.dataDir,
    PLUGINS: plugins.map((p) => p.id).join(','),
    RATE_LIMIT_SCALE: '1000000',
    // Every process of an install opens what this engine sealed (the link-signing secret, webhook secrets).
    APP_KEY: engine.config.env.APP_KEY!,
  };
  return { backend, engine, tenant, env };
}

/** p50/p95 of request latencies measured one after another. */
export async function timeRequests(
  run: () => Promise<void>,
  count: number,
): Promise<{ p50_ms: number; p95_ms: number }> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => Number(samples[Math.min(samples.length - 1, Math.floor(q * samples.length))].toFixed(2));
  return { p50_ms: at(0.5), p95_ms: at(0.95) };
}
