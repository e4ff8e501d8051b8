import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { Agent, request } from 'undici';
import type { Engine } from '@switchboard/core';
import {
  BenchOptions,
  createTenant,
  createTestEngine,
  productionBackend,
  TestBackend,
  waitFor,
} from '@switchboard/core/testing';
import campaign from '../src';
import { standardWebhookHeaders } from '../src/shared/standard-webhooks';
import { WebhookDispatcher } from '../src/webhooks/dispatcher';
import type { WebhookOptions } from '../src/webhooks/options';
import { newEventId, subscriberCreated, webhookBody, WebhookOutbox } from '../src/webhooks/outbox';
import { WebhooksService } from '../src/webhooks/service';

const CONCURRENCY = 64;
/** Events written per transaction when seeding, as a bulk change would. */
const PER_TRANSACTION = 1_000;
const TARGETS = { deliveries_per_second: 1_000, exactly_once: true };
/** Phase B: how long the retries may take before it counts as not met. */
const RETRY_WINDOW_MS = 120_000;

interface ReceiverStats {
  requests: number;
  refused: number;
  accepted: number;
  duplicates: number;
}

/** The receiver (webhook-receiver.ts) as its own process, not sharing the dispatcher's event loop. */
async function startReceiver(failRate: number) {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child: ChildProcess = spawn(process.execPath, [path.join(__dirname, 'webhook-receiver.js')], {
    env: { ...process.env, PORT: String(port), FAIL_RATE: String(failRate) },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}/hook`;
  const stats = async (): Promise<ReceiverStats> => (await fetch(url)).json() as Promise<ReceiverStats>;
  await waitFor(async () => (await fetch(url).catch(() => null))?.ok === true, 10_000);
  return {
    url,
    stats,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A fresh MariaDB database and Redis prefix, an engine with the campaign plugin's webhook options, a tenant. */
async function webhookEngine(webhooks: Partial<WebhookOptions>) {
  const backend: TestBackend | null = await productionBackend();
  if (!backend)
    throw new Error('benchmarks run on MariaDB and Redis: neither TEST_MYSQL_URL nor TEST_REDIS_URL may be down');
  let engine: Engine | undefined;
  try {
    engine = await createTestEngine(backend, {
      plugins: [campaign],
      env: { RATE_LIMIT_SCALE: '1000000' },
      overrides: { plugins: [{ id: 'campaign', package: '@switchboard/plugin-campaign', options: { webhooks } }] },
    });
    const tenant = await createTenant(engine, { name: 'Bench' });
    const container = engine.contexts.get('campaign')!.container;
    return {
      engine,
      tenant,
      container,
      async close() {
        await engine!.close();
        await backend.dispose();
      },
    };
  } catch (err) {
    await engine?.close().catch(() => undefined);
    await backend.dispose();
    throw err;
  }
}

type Setup = Awaited<ReturnType<typeof webhookEngine>>;

/** A subscription to `subscriber.created` at the receiver, and `count` events written through the outbox. */
async function seedDeliveries(setup: Setup, url: string, count: number, log: (line: string) => void) {
  const { engine, tenant, container } = setup;
  const hook = await container
    .resolve(WebhooksService)
    .create(tenant.organizationId, { name: 'Bench', url, events: ['subscriber.created'], active: true });
  const outbox = container.resolve(WebhookOutbox);
  const now = new Date();
  for (let from = 0; from < count; from += PER_TRANSACTION) {
    const events = Array.from({ length: Math.min(PER_TRANSACTION, count - from) }, (_, i) =>
      subscriberCreated({ id: from + i + 1, email: `s${from + i + 1}@webhooks.example`, status: 'enabled' }, now),
    );
    await engine.knex.transaction((trx) => outbox.emit(trx, tenant.organizationId, events));
  }
  log(`seeded ${count} deliveries`);
  return hook;
}

const countState = async (engine: Engine, state: string) =>
  Number((await engine.knex('webhook_deliveries').where({ state }).count({ n: '*' }))[0].n);

/** The baseline: the same number of signed POSTs, CONCURRENCY at a time, with undici straight to the receiver. */
async function bareposts(url: string, count: number): Promise<number> {
  const key = crypto.randomBytes(32);
  const agent = new Agent({ connections: CONCURRENCY, keepAliveTimeout: 10_000 });
  let next = 0;
  let failed = 0;
  const started = performance.now();
  const one = async () => {
    while (next < count) {
      const n = next++;
      const id = newEventId();
      const body = webhookBody(id, 'subscriber.created', new Date(), {
        subscriber_id: n,
        email: `s${n}@webhooks.example`,
        status: 'enabled',
      });
      const answer = await request(url, {
        method: 'POST',
        headers: standardWebhookHeaders(key, id, new Date(), body),
        body,
        dispatcher: agent,
      });
      await answer.body.dump();
      if (answer.statusCode !== 204) failed++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, one));
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  if (failed) throw new Error(`the baseline receiver refused ${failed} POSTs`);
  return Math.round(count / seconds);
}

/** Phase A: N due deliveries, one dispatcher run after another until all are delivered; then the baseline. */
async function throughput(deliveries: number, log: (line: string) => void) {
  const receiver = await startReceiver(0);
  const setup = await webhookEngine({ concurrency: CONCURRENCY });
  try {
    await seedDeliveries(setup, receiver.url, deliveries, log);
    const dispatcher = setup.container.resolve(WebhookDispatcher);
    log(`delivering ${deliveries} deliveries`);
    const started = performance.now();
    for (let round = 0; (await countState(setup.engine, 'delivered')) < deliveries; round++) {
      if (round > 0 && performance.now() - started > RETRY_WINDOW_MS) break;
      if (round > 0) await new Promise((r) => setTimeout(r, 50));
      await dispatcher.run();
    }
    const seconds = (performance.now() - started) / 1000;
    const delivered = await countState(setup.engine, 'delivered');
    const received = await receiver.stats();
    log(`delivered ${delivered} in ${seconds.toFixed(2)} s; baseline: ${deliveries} signed POSTs with undici`);
    const baseline = await bareposts(receiver.url, deliveries);
    const perSecond = Math.round(delivered / seconds);
    return {
      deliveries,
      delivered,
      received: received.accepted,
      seconds: Number(seconds.toFixed(2)),
      per_s: perSecond,
      baseline_per_s: baseline,
      ratio: Number((perSecond / baseline).toFixed(2)),
    };
  } finally {
    await setup.close();
    await receiver.stop();
  }
}

/** Phase B: a receiver that fails half the tries; every event must reach its dedupe log exactly once. */
async function exactlyOnce(events: number, log: (line: string) => void) {
  const receiver = await startReceiver(0.5);
  const setup = await webhookEngine({
    concurrency: CONCURRENCY,
    retryBaseMs: 50,
    retryMaxMs: 500,
    maxAttempts: 40,
    disableAfterFailures: 1_000_000_000,
  });
  try {
    await seedDeliveries(setup, receiver.url, events, log);
    const dispatcher = setup.container.resolve(WebhookDispatcher);
    log(`delivering ${events} events to a receiver failing half the tries`);
    const started = performance.now();
    let runs = 0;
    while ((await countState(setup.engine, 'pending')) > 0 && performance.now() - started < RETRY_WINDOW_MS) {
      await dispatcher.run();
      runs++;
      // What is left waits for its backoff (at most retryMaxMs): look again shortly.
      if (!(await dispatcher.due())) await new Promise((r) => setTimeout(r, 25));
    }
    const seconds = (performance.now() - started) / 1000;
    const stats = await receiver.stats();
    const attempts = Number((await setup.engine.knex('webhook_deliveries').sum({ n: 'attempts' }))[0].n);
    const result = {
      events,
      unique: stats.accepted,
      duplicates: stats.duplicates,
      failed: await countState(setup.engine, 'failed'),
      pending: await countState(setup.engine, 'pending'),
      tries: stats.requests,
      tries_logged: attempts,
      refused: stats.refused,
      runs,
      seconds: Number(seconds.toFixed(2)),
    };
    log(`exactly once: ${JSON.stringify(result)}`);
    return result;
  } finally {
    await setup.close();
    await receiver.stop();
  }
}

/**
 * `npm run bench -- webhooks`: outbound webhook deliveries on MariaDB + Redis to a receiver of its own
 * process on loopback. Throughput: 20,000 deliveries (5,000 with --quick) written by the outbox, then
 * delivered by the dispatcher; the baseline is as many signed POSTs with undici alone at the same
 * concurrency. Exactly once: 5,000 events (1,000 with --quick) to a receiver answering 500 to half the
 * tries, retried (50 ms backoff, up to 500 ms) until each reached the receiver's dedupe log.
 */
export async function webhooksBenchmark({ quick, log }: BenchOptions): Promise<Record<string, unknown>> {
  const a = await throughput(quick ? 5_000 : 20_000, log);
  const b = await exactlyOnce(quick ? 1_000 : 5_000, log);
  return {
    name: 'webhooks',
    database: 'mariadb',
    quick,
    concurrency: CONCURRENCY,
    throughput: a,
    exactly_once: b,
    targets: { ...TARGETS, retry_window_s: RETRY_WINDOW_MS / 1000 },
    met: {
      deliveries_per_second: a.delivered === a.deliveries && a.per_s >= TARGETS.deliveries_per_second,
      exactly_once: b.unique === b.events && b.failed === 0 && b.pending === 0 && b.duplicates === 0,
    },
  };
}
