import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect } from 'chai';
import { createClient } from 'redis';
import type { Engine } from '@switchboard/core';
import {
  apiClient,
  ApiClient,
  createTenant,
  createTestEngine,
  productionBackend,
  TestBackend,
  waitFor,
} from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import { exitOf, repoRoot, startCli } from '../src/cli';

const EVENTS = 2000;
/**
 * What a crash may deliver twice: the tries a run sent and has not written, below (CLAIMED_PER_PLACE + 1)
 * x the places (64): a claim waits while a places' worth is unwritten (docs/decisions.md, Outbound webhooks).
 */
const IN_FLIGHT = 5 * 64;
/** The API (this process) seals each webhook's secret; the workers open it: one key for both. */
const APP_KEY = crypto.randomBytes(32).toString('base64');

/**
 * Outbound webhooks are delivered at least once (issue 13): a `switchboard worker` killed with SIGKILL
 * mid-delivery, and a Redis that then comes back empty, end with every event at the receiver, at most
 * the tries in flight at the crash twice. MariaDB and Redis, real worker processes, a slow receiver on
 * loopback that keeps every webhook-id it took.
 */
describe('outbound webhooks survive a killed worker and an emptied Redis [mysql+redis]', function () {
  let backend: TestBackend | null = null;
  let engine: Engine;
  let api: ApiClient;
  let server: ReturnType<ReturnType<Engine['http']>['listen']>;
  let receiver: http.Server;
  let redisUrl: string;
  let configFile: string;
  const taken = new Map<string, number>();
  const workers: Array<ReturnType<typeof startCli>> = [];

  before(async function () {
    backend = await productionBackend();
    if (!backend) return this.skip();
    // Its own Redis database: emptying it is Redis coming back empty for this engine alone.
    const url = new URL(backend.redisUrl!);
    url.pathname = '/12';
    redisUrl = url.toString();
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          const id = String(req.headers['webhook-id']);
          taken.set(id, (taken.get(id) ?? 0) + 1);
          res.statusCode = 204;
          res.end();
        }, 40),
      );
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    // The workers' options: a short time limit, so a dead worker's lease (2 x the limit + 5 s) ends soon.
    const shipped = JSON.parse(fs.readFileSync(path.join(repoRoot, 'config/switchboard.json'), 'utf8'));
    shipped.plugins.campaign.options.webhooks = { timeoutMs: 1000 };
    fs.mkdirSync(backend.dataDir, { recursive: true });
    configFile = path.join(backend.dataDir, 'switchboard.json');
    fs.writeFileSync(configFile, JSON.stringify(shipped));
    engine = await createTestEngine(backend, { plugins: [campaign], env: { REDIS_URL: redisUrl, APP_KEY } });
    server = engine.http().listen(0);
    engine.startScheduler();
    api = apiClient(server, '/api/campaign', await createTenant(engine));
  });
  after(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await Promise.all(workers.map(exitOf));
    server?.close();
    receiver?.close();
    await engine?.close();
    await backend?.dispose();
  });

  const startWorker = () => {
    const worker = startCli(['worker'], {
      DATABASE_URL: backend!.databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: backend!.redisPrefix,
      PLUGINS: 'campaign',
      DATA_DIR: backend!.dataDir,
      SWITCHBOARD_CONFIG: configFile,
      APP_KEY,
    });
    workers.push(worker);
    return worker;
  };
  const states = async () =>
    Object.fromEntries(
      (await engine.knex('webhook_deliveries').groupBy('state').select('state', engine.knex.raw('count(*) as n'))).map(
        (r: { state: string; n: unknown }) => [r.state, Number(r.n)],
      ),
    );

  it('a worker killed mid-delivery, then Redis emptied: a new worker delivers every event', async () => {
    const port = (receiver.address() as AddressInfo).port;
    await api
      .post('/webhooks', { name: 'Crash', url: `http://127.0.0.1:${port}/`, events: ['subscriber.created'] })
      .expect(201);
    const first = startWorker();
    for (let start = 0; start < EVENTS; start += 1000) {
      const subscribers = Array.from({ length: 1000 }, (_, i) => ({ email: `w${start + i}@crash.test` }));
      await api.post('/subscribers/batch', { subscribers, skip_confirmation: true }).expect(200);
    }
    await waitFor(() => taken.size >= 300, 30_000);
    first.kill('SIGKILL');
    await exitOf(first);
    expect(taken.size).to.be.below(EVENTS);
    expect((await states()).pending).to.be.above(0);

    const redis = createClient({ url: redisUrl });
    await redis.connect();
    await redis.flushDb();
    await redis.quit();

    // Nothing is queued now: the scheduler's task finds the due deliveries in the database.
    startWorker();
    await waitFor(() => taken.size === EVENTS, 90_000);
    await waitFor(async () => (await states()).delivered === EVENTS, 15_000);
    expect(await states()).to.deep.equal({ delivered: EVENTS });
    const ids = new Set(await engine.knex('webhook_deliveries').pluck('event_id'));
    expect([...taken.keys()].every((id) => ids.has(id))).to.equal(true);
    const twice = [...taken.values()].filter((n) => n > 1).length;
    expect([...taken.values()].every((n) => n <= 2)).to.equal(true);
    expect(twice).to.be.at.most(IN_FLIGHT);
  }).timeout(120_000);
});
