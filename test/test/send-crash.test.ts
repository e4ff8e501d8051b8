import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createClient } from 'redis';
import { createKnex, Engine } from '@switchboard/core';
import {
  apiClient,
  ApiClient,
  createTenant,
  createTestEngine,
  productionBackend,
  smtpSink,
  SmtpSink,
  TestBackend,
  waitFor,
} from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import { exitOf, freePort, runJson, startCli } from '../src/cli';

const RECIPIENTS = 3000;
/** docs/architecture.md, Sending: a claim older than 2 minutes is given back; a send idle for 30 s is queued again. */
const CLAIM_LEASE_MS = 120_000;
const STALL_MS = 30_000;
/** What may be sent twice after a crash: the claims in flight, 50 per range and 4 ranges per worker. */
const IN_FLIGHT = 4 * 50;

/**
 * The database is the record of who has been sent what (issue 10): a worker process killed with SIGKILL
 * mid-send, or a Redis that comes back empty, ends with every recipient sent once, and at most the
 * mails in flight at the crash sent twice. MariaDB and Redis, workers as real `switchboard worker`
 * processes, mail counted at an in-test SMTP server.
 */
describe('sending survives a killed worker and an emptied Redis [mysql+redis]', function () {
  let backend: TestBackend | null = null;
  let sink: SmtpSink & { accepted: number };
  let engine: Engine;
  let api: ApiClient;
  let server: ReturnType<ReturnType<Engine['http']>['listen']>;
  /** The test engine runs the scheduler (and so the watchdog) this far ahead of real time. */
  let ahead = 0;
  let list: number;
  let redisUrl: string;
  const workers: Array<ReturnType<typeof startCli>> = [];

  before(async function () {
    backend = await productionBackend();
    if (!backend) return this.skip();
    // Its own Redis database: emptying it is Redis coming back empty for this engine alone.
    const url = new URL(backend.redisUrl!);
    url.pathname = '/13';
    redisUrl = url.toString();
    sink = await smtpSink({ delayMs: 2 });
    const env = { SMTP_URL: sink.url, REDIS_URL: redisUrl };
    engine = await createTestEngine(backend, {
      plugins: [campaign],
      env,
      clock: { now: () => new Date(Date.now() + ahead) },
    });
    server = engine.http().listen(0);
    engine.startScheduler();
    const tenant = await createTenant(engine);
    api = apiClient(server, '/api/campaign', tenant);
    list = (await api.post('/lists', { name: 'All', code: 'all' }).expect(201)).body.data.id;
    for (let start = 0; start < RECIPIENTS; start += 1000) {
      const subscribers = Array.from({ length: 1000 }, (_, i) => ({ email: `r${start + i}@crash.test` }));
      await api.post('/subscribers/batch', { subscribers, lists: [list], skip_confirmation: true }).expect(200);
    }
  });
  after(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await Promise.all(workers.map(exitOf));
    server?.close();
    await engine?.close();
    await sink?.close();
    await backend?.dispose();
  });

  const workerEnv = () => ({
    DATABASE_URL: backend!.databaseUrl,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: backend!.redisPrefix,
    PLUGINS: 'campaign',
    DATA_DIR: backend!.dataDir,
    SMTP_URL: sink.url,
    // Every process of an install opens the same sealed secrets (the link-signing secret among them).
    APP_KEY: engine.config.env.APP_KEY,
  });
  const startWorker = () => {
    const worker = startCli(['worker'], workerEnv());
    workers.push(worker);
    return worker;
  };
  const message = async (name: string) =>
    (
      await api
        .post('/messages', { name, subject: `${name} {{email}}`, content_text: 'Hello', from_email: 'a@acme.test' })
        .expect(201)
    ).body.data.id as number;
  const delivery = async (id: number) => (await api.get(`/messages/${id}`).expect(200)).body.data;
  /** Mails per recipient of message `id` at the sink. */
  const perRecipient = (id: number) => {
    const counts = new Map<string, number>();
    for (const m of sink.mails)
      if (new RegExp(`^X-Campaign-Message-Id: ${id}\\r?$`, 'im').test(m.raw))
        for (const to of m.to) counts.set(to, (counts.get(to) ?? 0) + 1);
    return counts;
  };
  const expectEveryoneOnce = (id: number, accepted: number) => {
    const counts = perRecipient(id);
    expect(counts.size).to.equal(RECIPIENTS);
    const twice = [...counts.values()].filter((n) => n > 1).length;
    expect([...counts.values()].every((n) => n <= 2)).to.equal(true);
    expect(twice).to.be.at.most(IN_FLIGHT);
    expect(accepted).to.equal(RECIPIENTS + twice);
  };

  it('a worker killed with SIGKILL mid-send: a new worker finishes, everyone gets the mail once', async () => {
    const first = startWorker();
    const id = await message('Crash');
    const before = sink.accepted;
    await api.post(`/messages/${id}/send`, { list_ids: [list] }).expect(200);
    await waitFor(() => sink.accepted - before >= 600, 30_000);
    first.kill('SIGKILL');
    await exitOf(first);
    expect(sink.accepted - before).to.be.below(RECIPIENTS);

    // The watchdog, once the dead worker's claims are older than the lease, queues them again; then
    // real time again, so that the new worker's claims are not taken for a dead one's.
    const claimed = async () =>
      Number((await engine.knex('send_recipients').where({ state: 'sending' }).count({ n: '*' }))[0].n);
    expect(await claimed()).to.be.above(0);
    ahead = CLAIM_LEASE_MS + 1000;
    await waitFor(async () => (await claimed()) === 0, 10_000);
    ahead = 0;
    startWorker();
    await waitFor(async () => (await delivery(id)).status === 'sent', 60_000);
    const done = await delivery(id);
    expect(done.delivery).to.include({ recipients: RECIPIENTS, sent: RECIPIENTS, failed: 0, queued: 0 });
    expect(done.stats.sent).to.equal(RECIPIENTS);
    expectEveryoneOnce(id, sink.accepted - before);
  }).timeout(60_000);

  it('Redis emptied mid-send (FLUSHDB): the watchdog queues the rest again from the database', async () => {
    if (!workers.some((w) => w.exitCode === null && w.signalCode === null)) startWorker();
    const id = await message('Flush');
    const before = sink.accepted;
    await api.post(`/messages/${id}/send`, { list_ids: [list] }).expect(200);
    await waitFor(() => sink.accepted - before >= 600, 30_000);
    const redis = createClient({ url: redisUrl });
    await redis.connect();
    await redis.flushDb();
    await redis.quit();
    expect(sink.accepted - before).to.be.below(RECIPIENTS);

    // The scheduler's clock past the stall time: the send looks idle as soon as its running ranges end.
    ahead = STALL_MS + 1000;
    try {
      await waitFor(async () => (await delivery(id)).status === 'sent', 60_000);
    } finally {
      ahead = 0;
    }
    const done = await delivery(id);
    expect(done.delivery).to.include({ recipients: RECIPIENTS, sent: RECIPIENTS, failed: 0, queued: 0 });
    expectEveryoneOnce(id, sink.accepted - before);
  }).timeout(60_000);
});

/**
 * The embedded default: one `switchboard serve` process (API, in-process queue, worker and scheduler on
 * SQLite) killed with SIGKILL mid-send and started again. Its queue died with it; the restarted
 * process's watchdog finds the send in the database and finishes it.
 */
describe('sending survives a killed serve process on the embedded default', function () {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-crash-'));
  const databaseUrl = `sqlite:${path.join(dataDir, 'switchboard.sqlite')}`;
  let sink: SmtpSink & { accepted: number };
  let serve: ReturnType<typeof startCli> | undefined;
  let base = '';
  let token = '';
  const env = () => ({
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    PLUGINS: 'campaign',
    SMTP_URL: sink.url,
    REDIS_URL: '',
    // The test polls the message every 20 ms: on a slow machine the send outlasts a free plan's hourly GETs.
    RATE_LIMIT_SCALE: '1000',
  });
  const start = async () => {
    const port = await freePort();
    serve = startCli(['serve'], { ...env(), PORT: String(port) });
    base = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${base}/health`).catch(() => null))?.ok === true, 30_000);
  };
  const call = async (method: string, route: string, body?: object) => {
    const res = await fetch(`${base}/api/campaign${route}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    expect(res.status, `${method} ${route}`).to.be.below(300);
    return ((await res.json()) as { data: any }).data;
  };

  before(async () => {
    sink = await smtpSink({ delayMs: 2 });
    await runJson(['migrate'], env());
    const org = (await runJson(['org:create', '--name', 'Crash'], env())).id;
    token = (await runJson(['token:create', '--org', String(org), '--name', 't', '--permissions', '*'], env())).token;
    await start();
  });
  after(async () => {
    serve?.kill('SIGKILL');
    if (serve) await exitOf(serve);
    await sink?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('a restarted serve finishes the send: everyone gets the mail, at most the claims in flight twice', async () => {
    const list = (await call('POST', '/lists', { name: 'All', code: 'all' })).id;
    for (let start = 0; start < RECIPIENTS; start += 1000) {
      const subscribers = Array.from({ length: 1000 }, (_, i) => ({ email: `e${start + i}@crash.test` }));
      await call('POST', '/subscribers/batch', { subscribers, lists: [list], skip_confirmation: true });
    }
    const id = (
      await call('POST', '/messages', { name: 'E', subject: 'S', content_text: 'T', from_email: 'a@acme.test' })
    ).id;
    await call('POST', `/messages/${id}/send`, { list_ids: [list] });
    await waitFor(() => sink.accepted >= 600, 30_000);
    serve!.kill('SIGKILL');
    await exitOf(serve!);
    expect(sink.accepted).to.be.below(RECIPIENTS);

    // The time the watchdog waits for, passed: the dead process's claims are older than the lease and
    // the send has recorded nothing for longer than the stall time.
    const knex = createKnex(databaseUrl);
    try {
      await knex('send_recipients')
        .where({ state: 'sending' })
        .update({ claimed_at: new Date(Date.now() - CLAIM_LEASE_MS - 1000) });
      await knex('message_sends').update({ updated_at: new Date(Date.now() - STALL_MS - 1000) });
    } finally {
      await knex.destroy();
    }
    await start();
    await waitFor(async () => (await call('GET', `/messages/${id}`)).status === 'sent', 60_000);
    const done = await call('GET', `/messages/${id}`);
    expect(done.delivery).to.include({ recipients: RECIPIENTS, sent: RECIPIENTS, failed: 0, queued: 0 });
    const counts = new Map<string, number>();
    for (const m of sink.mails) for (const to of m.to) counts.set(to, (counts.get(to) ?? 0) + 1);
    expect(counts.size).to.equal(RECIPIENTS);
    const twice = [...counts.values()].filter((n) => n > 1).length;
    expect([...counts.values()].every((n) => n <= 2)).to.equal(true);
    expect(twice).to.be.at.most(IN_FLIGHT);
  }).timeout(60_000);
});
