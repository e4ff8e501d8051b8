import { benchBackend, BenchOptions } from '@switchboard/core/testing';
import campaign from '../src';
import { api, seed } from './client';
import { pollHealth } from './health-poll';

/** Issue 26: 24 batch imports of 1,000 subscribers (about 850 KB each), 6 at a time, on the embedded default. */
const BATCHES = 24;
const BATCH = 1000;
const PARALLEL = 6;
const POLL_EVERY_MS = 20;
const TARGETS = { health_max_ms: 200 };

/** A subscriber of about 850 bytes of JSON, as the import had (meta_data values hold 191 characters). */
const subscriber = (n: number) => ({
  email: `user${n}@load.example`,
  first_name: `First${n}`,
  last_name: `Last${n}`,
  meta_data: {
    plan: ['free', 'pro', 'enterprise'][n % 3],
    region: `region-${n % 17}`,
    ...Object.fromEntries(
      ['note', 'source', 'company', 'address'].map((k) => [k, `${k}${n} `.repeat(40).slice(0, 170)]),
    ),
  },
});

/**
 * The embedded default (SQLite, no Redis) under an import: how long `/health` waits while 6 batch imports
 * run at once, against the same process idle (the baseline), and the import rate.
 */
export async function embeddedLoadBenchmark({ log, serve }: BenchOptions): Promise<Record<string, unknown>> {
  const { backend, engine, tenant, env } = await benchBackend([campaign], { embedded: true });
  try {
    await engine.close();
    const server = await serve(env);
    try {
      const client = api([server.url], tenant.token);
      log('health while idle');
      const idlePoll = pollHealth(server.url, POLL_EVERY_MS);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const idle = await idlePoll.stop();
      log(`importing ${BATCHES} x ${BATCH} subscribers, ${PARALLEL} at a time, polling /health`);
      const loaded = pollHealth(server.url, POLL_EVERY_MS);
      const rate = await seed(client, 0, BATCHES * BATCH, subscriber, log, PARALLEL);
      const underLoad = await loaded.stop();
      return {
        name: 'embedded-load',
        database: 'sqlite',
        sizes: {
          batches: BATCHES,
          rows_per_batch: BATCH,
          parallel: PARALLEL,
          body_kb: Math.round(
            JSON.stringify({ subscribers: Array.from({ length: BATCH }, (_, n) => subscriber(n)) }).length / 1024,
          ),
        },
        import_per_second: rate,
        health_idle: idle,
        health_under_import: underLoad,
        ratio_max_to_idle_p50: Number((underLoad.max_ms / idle.p50_ms).toFixed(1)),
        targets: TARGETS,
        met: { health_max_ms: underLoad.max_ms <= TARGETS.health_max_ms },
      };
    } finally {
      await server.stop();
    }
  } finally {
    await backend.dispose();
  }
}
