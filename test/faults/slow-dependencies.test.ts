import { expect } from 'chai';
import { createKnex } from '@switchboard/core';
import { smtpSink, stallingSmtp, waitFor } from '@switchboard/core/testing';
import type { Knex } from 'knex';
import { privatePort } from '../src/private-port';
import { PrivateMariaDb } from './support/private-mariadb';
import { PrivateRedis } from './support/private-redis';
import { ServeProcess } from './support/serve-process';
import { createTenant, Tenant } from './support/tenant';
import { hangingHttp, heldMs, mostAtOnce } from './support/hanging-http';
import { recordingHttp, RecordingHttp } from './support/recording-http';
import { quantile, ResponsivenessProbe } from './support/responsiveness-probe';
import { logSummary } from './support/log-summary';

const MONITOR_KEY = 'slow-dependencies-monitor-key-0123456789';
/** The engine's settings these tests lean on (defaults, none changed by the test). */
const SMTP_SILENCE_MS = 30_000;
const SMTP_MAIL_MS = 60_000;
const SEND_RETRY_AFTER_MS = 60_000;
const WEBHOOK_TIMEOUT_MS = 10_000;
const WEBHOOK_RETRY_BASE_MS = 10_000;
const WEBHOOK_CONCURRENCY = 64;
/** A given-up try's close, seen by the hanging receiver after its successor's connect (a run saw 17 of 16). */
const CLOSE_SEEN_LATE_MS = 100;
const CHECK_TIMEOUT_MS = 10_000;
const CHECK_CONFIRM_DELAY_MS = 2_000;
/** The API while a dependency hangs: p95 and worst answer of /health and a list, on a shared 2-core machine. */
const API_P95_MS = 500;
const API_MAX_MS = 2_000;

const summarize = (values: number[]) => ({
  n: values.length,
  min: values.length ? Math.min(...values) : 0,
  p50: quantile(values, 0.5),
  p95: quantile(values, 0.95),
  max: Math.max(0, ...values),
});

/**
 * A hanging SMTP relay, webhook receiver and monitored endpoint, under a real `switchboard serve` on a
 * MariaDB and a Redis of the test's own: each hang ends at the engine's time limit, the work is tried
 * again, and the rest (the API, other tenants' webhooks, healthy servers' checks) goes on meanwhile.
 */
describe('faults: slow or hanging dependencies [private mariadb+redis]', function () {
  let db: PrivateMariaDb;
  let redis: PrivateRedis;
  let serve: ServeProcess;
  let knex: Knex;
  let smtpPort: number;
  const closers: Array<() => Promise<unknown>> = [];

  before(async function () {
    this.timeout(180_000);
    db = await PrivateMariaDb.start();
    redis = await PrivateRedis.start();
    smtpPort = await privatePort();
    serve = new ServeProcess({
      DATABASE_URL: db.serverUrl(),
      REDIS_URL: redis.url,
      REDIS_PREFIX: 'faults:',
      PLUGINS: 'campaign,server-monitor,users-projects',
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      SERVER_MONITOR_API_KEY: MONITOR_KEY,
      MONITOR_ALLOWED_RANGES: '127.0.0.1/32',
      // The probes and the tenants' writes are not a rate-limit test.
      RATE_LIMIT_SCALE: '1000',
    });
    await serve.setUp();
    await serve.start();
    knex = createKnex(db.serverUrl());
  });
  after(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    await knex?.destroy();
    await serve?.dispose();
    await redis?.dispose();
    await db?.dispose();
  });

  const probeApi = (tenant: Tenant, list: string) =>
    new ResponsivenessProbe((route, signal) => tenant.fetch(route, { signal }), ['/health', list]);

  /** A webhook on subscriber.created to `url`; the subscriber ids created, with when each was acknowledged. */
  const hookAt = (tenant: Tenant, url: string) =>
    tenant.json('POST', '/api/campaign/webhooks', { name: 'slow', url, events: ['subscriber.created'] }, 201);

  /** Subscribers created by one client, `everyMs` apart, until stopped: email -> acknowledged at. */
  const keepCreating = (tenant: Tenant, domain: string, everyMs: number, body: Record<string, unknown> = {}) => {
    const acked = new Map<string, number>();
    let running = true;
    const loop = (async () => {
      for (let i = 0; running; i++) {
        const email = `s${i}@${domain}`;
        await tenant.json('POST', '/api/campaign/subscribers', { email, ...body }, 201);
        acked.set(email, Date.now());
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    })();
    return {
      acked,
      stop: async () => {
        running = false;
        await loop;
      },
    };
  };

  /** Time from each acknowledged subscriber to its subscriber.created webhook at the receiver. */
  const webhookLatencies = (acked: Map<string, number>, receiver: RecordingHttp) => {
    const arrived = new Map<string, number>();
    for (const hit of receiver.hits) {
      const email = (JSON.parse(hit.body) as { data?: { email?: string } }).data?.email;
      if (email && !arrived.has(email)) arrived.set(email, hit.at);
    }
    return {
      latencies: [...acked].filter(([email]) => arrived.has(email)).map(([email, at]) => arrived.get(email)! - at),
      missing: [...acked.keys()].filter((email) => !arrived.has(email)),
    };
  };

  it('SMTP relay hangs: each mail ends at its time limit and is tried again; once it answers, every recipient gets one mail', async () => {
    const tenant = await createTenant(serve, 'Mail');
    const domain = 'smtp-hang.test';
    const RECIPIENTS = 20;
    const CONFIRMATIONS = 6;
    // The relay: some connections never greeted, some greeted then silent, some answered a byte each 2 s.
    const relay = await stallingSmtp({ port: smtpPort, trickleEveryMs: 2_000 });
    let relayOpen = true;
    closers.push(() => (relayOpen ? relay.close() : Promise.resolve()));
    const receiver = await recordingHttp();
    closers.push(() => receiver.close());
    await hookAt(tenant, `${receiver.url}/hook`);

    const list = (await tenant.json('POST', '/api/campaign/lists', { name: 'All', code: 'all' }, 201)).data.id;
    const subscribers = Array.from({ length: RECIPIENTS }, (_, i) => ({ email: `r${i}@${domain}` }));
    await tenant.json(
      'POST',
      '/api/campaign/subscribers/batch',
      { subscribers, lists: [list], skip_confirmation: true },
      200,
    );
    const message = (
      await tenant.json(
        'POST',
        '/api/campaign/messages',
        { name: 'Hang', subject: 'Hang {{email}}', content_text: 'Hello', from_email: 'news@acme.test' },
        201,
      )
    ).data.id;
    const hangStart = Date.now();
    const probe = probeApi(tenant, '/api/campaign/subscribers?per_page=20');
    await tenant.json('POST', `/api/campaign/messages/${message}/send`, { list_ids: [list] }, 200);
    // Double opt-in mails, and subscriber.created webhooks to a healthy receiver: other work meanwhile.
    const writer = keepCreating(tenant, `confirm.${domain}`, 6_000, { confirmed: false });
    await waitFor(() => writer.acked.size >= CONFIRMATIONS, 60_000, 100);
    await writer.stop();

    // Held past the longest limit (a whole mail: 60 s), so that every kind of hang met its limit.
    const HANG_MS = SMTP_MAIL_MS + 20_000;
    await waitFor(() => Date.now() - hangStart >= HANG_MS, HANG_MS + 5_000, 500);
    const api = probe.summary();
    await probe.stop();
    const connections = relay.connections.map((c) => ({ ...c }));
    const hooks = webhookLatencies(writer.acked, receiver);

    // The relay answers now, on the same port.
    await relay.close();
    relayOpen = false;
    const healthyAt = Date.now();
    const sink = await smtpSink({ port: smtpPort });
    closers.push(() => sink.close());
    const expected = [...subscribers.map((s) => s.email), ...writer.acked.keys()];
    const mailsTo = (email: string) => sink.to(email).length;
    // A recipient whose mail timed out waits 1 minute before its next try (then the watchdog queues its range).
    const allMailed = await waitFor(() => expected.every((e) => mailsTo(e) >= 1), SEND_RETRY_AFTER_MS * 3, 500).then(
      () => true,
      () => false,
    );
    const mailedAfterMs = Date.now() - healthyAt;
    // A recipient's outcome is recorded when its claim's mails are all handed over: read once it is.
    const retried = await knex('send_recipients').where('attempts', '>=', 2).count({ n: '*' });
    const sendRow = await knex('message_sends').where({ message_id: message }).first('status', 'sent', 'failed');
    // Nothing more comes: a mail that was tried during the hang is not sent twice.
    await new Promise((resolve) => setTimeout(resolve, 5_000));

    const closedBy = (kind: string) =>
      summarize(heldMs(connections.filter((c) => c.kind === kind && c.closedAt !== null)));
    const figures = {
      scenario: 'smtp relay hangs',
      recipients: RECIPIENTS,
      confirmations: writer.acked.size,
      relay_connections: connections.length,
      held_ms_by_kind: {
        'no-greeting': closedBy('no-greeting'),
        silent: closedBy('silent'),
        trickle: closedBy('trickle'),
      },
      still_open_at_switch: connections.filter((c) => c.closedAt === null).length,
      recipients_tried_again: Number(retried[0].n),
      all_mailed: allMailed,
      mailed_after_relay_healthy_ms: mailedAfterMs,
      mails_missing: expected.filter((e) => mailsTo(e) === 0).length,
      mails_duplicated: expected.filter((e) => mailsTo(e) > 1).length,
      send: sendRow,
      webhook_latency_ms_during_hang: summarize(hooks.latencies),
      webhooks_missing: hooks.missing.length,
      api_during_hang: api,
      log: logSummary(serve.logLines.filter((l) => l.at >= hangStart && l.at < healthyAt).map((l) => l.line)),
    };
    console.log(`      figures ${JSON.stringify(figures)}`);

    expect(serve.alive).to.equal(true);
    // Each kind of hang was met, and each ended at its limit (plus nodemailer's 5 s wait to close).
    for (const kind of ['no-greeting', 'silent', 'trickle'])
      expect(figures.held_ms_by_kind[kind as 'silent'].n, `${kind} connections closed by the engine`).to.be.above(0);
    expect(figures.held_ms_by_kind['no-greeting'].max).to.be.below(10_000 + 6_000);
    expect(figures.held_ms_by_kind.silent.max).to.be.below(SMTP_SILENCE_MS + 6_000);
    expect(figures.held_ms_by_kind.trickle.max).to.be.below(SMTP_MAIL_MS + 6_000);
    expect(figures.recipients_tried_again, 'recipients tried again after a timeout').to.be.above(0);
    expect(allMailed, 'every recipient mailed once the relay answers').to.equal(true);
    expect(figures.mails_duplicated).to.equal(0);
    expect(sendRow.status).to.equal('sent');
    expect(Number(sendRow.sent)).to.equal(RECIPIENTS);
    expect(hooks.missing).to.deep.equal([]);
    expect(figures.webhook_latency_ms_during_hang.max, 'webhooks not held up by the hung relay').to.be.below(5_000);
    for (const [route, s] of Object.entries(api)) {
      expect(s.not200, `${route} answered`).to.equal(0);
      expect(s.p95, `${route} p95`).to.be.below(API_P95_MS);
      expect(s.max, `${route} max`).to.be.below(API_MAX_MS);
    }
  }).timeout(10 * 60_000);

  it("a tenant's webhook receiver hangs: its tries end at the time limit and back off; another tenant's deliveries arrive promptly", async () => {
    const hung = await createTenant(serve, 'HungReceiver');
    const healthy = await createTenant(serve, 'HealthyReceiver');
    const hanging = await hangingHttp();
    closers.push(() => hanging.close());
    const receiver = await recordingHttp();
    closers.push(() => receiver.close());
    await hookAt(hung, `${hanging.url}/hook`);
    await hookAt(healthy, `${receiver.url}/hook`);

    // More deliveries that hang than the dispatcher keeps in flight (64): the hung tenant could fill it.
    const HUNG_EVENTS = 80;
    const start = Date.now();
    const subscribers = Array.from({ length: HUNG_EVENTS }, (_, i) => ({ email: `h${i}@hung.test` }));
    await hung.json('POST', '/api/campaign/subscribers/batch', { subscribers, skip_confirmation: true }, 200);
    const probe = probeApi(healthy, '/api/campaign/subscribers?per_page=20');
    const writer = keepCreating(healthy, 'healthy.test', 500, { confirmed: true });
    // Long enough for every hung delivery's first try (16 at a time, 10 s each) and some second tries.
    const HOLD_MS = 7 * WEBHOOK_TIMEOUT_MS;
    await waitFor(() => Date.now() - start >= HOLD_MS, HOLD_MS + 5_000, 500);
    await writer.stop();
    await waitFor(() => webhookLatencies(writer.acked, receiver).missing.length === 0, 30_000, 100).catch(
      () => undefined,
    );
    const api = probe.summary();
    await probe.stop();
    const { latencies, missing } = webhookLatencies(writer.acked, receiver);

    // Connections that carried a request (not one the client opened and closed unused).
    const requests = hanging.requests.filter((r) => r.path !== null).map((r) => ({ ...r }));
    const triesById = new Map<string, typeof requests>();
    for (const r of requests) if (r.webhookId) triesById.set(r.webhookId, [...(triesById.get(r.webhookId) ?? []), r]);
    // From the end of a first try to the start of the second: the back-off (10 s +-20%).
    const backoffs = [...triesById.values()]
      .filter((tries) => tries.length >= 2 && tries[0].closedAt !== null)
      .map((tries) => tries[1].openedAt - tries[0].closedAt!);
    const hungRows = await knex('webhook_deliveries as d')
      .join('webhooks as w', 'w.id', 'd.webhook_id')
      .where('w.organization_id', hung.org)
      .select('d.state', 'd.attempts', 'd.last_error');
    const figures = {
      scenario: 'webhook receiver hangs',
      hung_deliveries: hungRows.length,
      hung_tries: requests.length,
      hung_try_held_ms: summarize(heldMs(requests)),
      hung_tries_at_once_max: mostAtOnce(requests, CLOSE_SEEN_LATE_MS),
      hung_retry_backoff_ms: summarize(backoffs),
      hung_states: hungRows.reduce<Record<string, number>>((n, r) => ({ ...n, [r.state]: (n[r.state] ?? 0) + 1 }), {}),
      hung_last_errors: logSummary(
        hungRows.map((r) => String(r.last_error)),
        3,
      ),
      healthy_deliveries: writer.acked.size,
      healthy_missing: missing.length,
      healthy_latency_ms: summarize(latencies),
      api_during_hang: api,
    };
    console.log(`      figures ${JSON.stringify(figures)}`);

    expect(serve.alive).to.equal(true);
    expect(hungRows.length).to.equal(HUNG_EVENTS);
    expect(
      hungRows.every((r) => r.state === 'pending'),
      'nothing delivered, nothing given up yet',
    ).to.equal(true);
    expect(figures.hung_try_held_ms.n).to.be.above(0);
    // Each try ends at the time limit (a second of slack for the event loop and the close).
    expect(figures.hung_try_held_ms.min).to.be.at.least(WEBHOOK_TIMEOUT_MS - 100);
    expect(figures.hung_try_held_ms.max).to.be.below(WEBHOOK_TIMEOUT_MS + 1_000);
    // The hung subscription holds a quarter of the places, the rest stays for the others.
    expect(figures.hung_tries_at_once_max).to.be.at.most(WEBHOOK_CONCURRENCY / 4);
    expect(backoffs.length, 'hung deliveries tried a second time').to.be.above(0);
    expect(Math.min(...backoffs)).to.be.at.least(0.8 * WEBHOOK_RETRY_BASE_MS - 100);
    expect(missing).to.deep.equal([]);
    // The healthy tenant's deliveries do not wait for the hung tenant's tries.
    expect(figures.healthy_latency_ms.p95, 'healthy webhook latency p95').to.be.below(1_000);
    expect(figures.healthy_latency_ms.max, 'healthy webhook latency max').to.be.below(WEBHOOK_TIMEOUT_MS / 2);
    for (const [route, s] of Object.entries(api)) {
      expect(s.not200, `${route} answered`).to.equal(0);
      expect(s.p95, `${route} p95`).to.be.below(API_P95_MS);
      expect(s.max, `${route} max`).to.be.below(API_MAX_MS);
    }
  }).timeout(5 * 60_000);

  it('monitored endpoints hang: their checks end at the check timeout as failures; healthy servers are checked every round', async () => {
    const tenant = await createTenant(serve, 'Monitor', 'pro');
    const hanging = await hangingHttp();
    closers.push(() => hanging.close());
    const farm = await recordingHttp();
    closers.push(() => farm.close());
    const SERVERS = 30;
    // Hung and healthy servers interleaved, so that hung ones come first in every part of a round.
    const servers: Array<{ id: number; hung: boolean; path: string }> = [];
    for (let i = 0; i < 2 * SERVERS; i++) {
      const hung = i % 2 === 0;
      const path = `/${hung ? 'hung' : 'ok'}/${i}`;
      const endpoint = `${hung ? hanging.url : farm.url}${path}`;
      const body = { title: `server ${i}`, endpoint };
      const id = (await tenant.json('POST', '/api/servermonitor/servers', body, 201)).data.id as number;
      servers.push({ id, hung, path });
    }
    const probe = probeApi(tenant, '/api/servermonitor/servers?per_page=20');
    // Rounds: the scheduler's each minute, and ours once half a cadence (30 s) has passed since the last,
    // never 13 to 26 s before the minute: the scheduler's round then runs (only one within 15 s of ours is
    // left alone) while this one's hung checks (up to 24 s) still hold their servers.
    const rounds: number[] = [];
    const untilMinute = () => 60_000 - (Date.now() % 60_000);
    const ROUNDS = 3;
    const start = Date.now();
    await waitFor(
      async () => {
        const row = await knex('monitor_dispatches').where({ tier: 'premium' }).first('dispatched_at');
        const at = row ? new Date(row.dispatched_at).getTime() : 0;
        if (at >= start - 1_000 && !rounds.includes(at)) rounds.push(at);
        if (rounds.length >= ROUNDS) return true;
        const due = !rounds.length || Date.now() - rounds[rounds.length - 1] > 31_000;
        if (due && (untilMinute() > 26_000 || untilMinute() < 13_000))
          await serve.fetch(`/api/servermonitor/check/premium/${MONITOR_KEY}`).then((r) => r.arrayBuffer());
        return false;
      },
      ROUNDS * 70_000,
      500,
    );
    // The last round's checks: the hung ones end within two timeouts and the confirmation pause.
    const lastRoundDone = rounds[ROUNDS - 1] + 2 * CHECK_TIMEOUT_MS + CHECK_CONFIRM_DELAY_MS + 3_000;
    await waitFor(() => Date.now() >= lastRoundDone, 60_000, 500);
    const api = probe.summary();
    await probe.stop();

    // Per round, each healthy server's hits and how long after the dispatch they came.
    const healthyPaths = new Set(servers.filter((s) => !s.hung).map((s) => s.path));
    const perRound = rounds.map((at, r) => {
      const until = rounds[r + 1] ?? Infinity;
      const hits = farm.hits.filter((h) => healthyPaths.has(h.path) && h.at >= at && h.at < until);
      const byPath = new Map<string, number>();
      for (const h of hits) byPath.set(h.path, (byPath.get(h.path) ?? 0) + 1);
      return {
        healthy_checked: byPath.size,
        healthy_hits: hits.length,
        // dispatched_at has whole seconds: up to 1 s more than the real wait.
        healthy_last_hit_after_ms: Math.max(0, ...hits.map((h) => h.at - at)),
        hung_tries: hanging.requests.filter((q) => q.openedAt >= at && q.openedAt < until).length,
      };
    });
    // Each round's result of each hung server, and how long after the dispatch it was written.
    const hungIdsOf = new Set(servers.filter((s) => s.hung).map((s) => s.id));
    const resultsByRound = await Promise.all(
      rounds.map(async (at, r) => {
        const rows = await knex('monitor_check_results')
          .whereIn('server_id', [...hungIdsOf])
          .andWhere('checked_at', '>=', new Date(at))
          .andWhere('checked_at', '<', new Date(rounds[r + 1] ?? Date.now() + 60_000))
          .select('checked_at');
        return {
          results: rows.length,
          last_after_ms: Math.max(0, ...rows.map((x) => new Date(x.checked_at).getTime() - at)),
        };
      }),
    );
    for (const [r, round] of resultsByRound.entries())
      Object.assign(perRound[r], { hung_results: round.results, hung_last_result_after_ms: round.last_after_ms });
    const hungIds = servers.filter((s) => s.hung).map((s) => s.id);
    const results = await knex('monitor_check_results')
      .whereIn(
        'server_id',
        servers.map((s) => s.id),
      )
      .select('server_id', 'up', 'status', 'error');
    const hungResults = results.filter((r) => hungIds.includes(Number(r.server_id)));
    const healthyResults = results.filter((r) => !hungIds.includes(Number(r.server_id)));
    const figures = {
      scenario: 'monitored endpoints hang',
      servers: { hung: hungIds.length, healthy: SERVERS },
      rounds: rounds.length,
      round_gaps_ms: rounds.slice(1).map((at, i) => at - rounds[i]),
      per_round: perRound,
      hung_try_held_ms: summarize(heldMs(hanging.requests.filter((q) => q.path !== null))),
      hung_results: logSummary(
        hungResults.map((r) => `${r.status} ${r.error}`),
        3,
      ),
      healthy_results: logSummary(
        healthyResults.map((r) => `${r.status}`),
        3,
      ),
      api_during_hang: api,
    };
    console.log(`      figures ${JSON.stringify(figures)}`);

    expect(serve.alive).to.equal(true);
    for (const [r, round] of perRound.entries()) {
      expect(round.healthy_checked, `round ${r}: every healthy server checked`).to.equal(SERVERS);
      expect(round.healthy_hits, `round ${r}: once each`).to.equal(SERVERS);
      // Not behind the hung checks (10 s each, 22 s with the confirmation).
      expect(round.healthy_last_hit_after_ms, `round ${r}: healthy checks done`).to.be.below(CHECK_TIMEOUT_MS / 2);
      expect(round.hung_tries, `round ${r}: hung servers tried`).to.be.at.least(hungIds.length);
      // A hung check: its try and the confirming try 2 s later, each ended at the timeout (1 s of slack for
      // the event loop, 1 s for checked_at's whole seconds).
      const checkBound = 2 * CHECK_TIMEOUT_MS + CHECK_CONFIRM_DELAY_MS + 2_000;
      expect(resultsByRound[r].results, `round ${r}: a result per hung server`).to.equal(hungIds.length);
      expect(resultsByRound[r].last_after_ms, `round ${r}: hung checks over`).to.be.below(checkBound);
    }
    const held = heldMs(hanging.requests.filter((q) => q.path !== null));
    expect(held.length).to.be.above(0);
    expect(Math.min(...held)).to.be.at.least(CHECK_TIMEOUT_MS - 100);
    // A connection the check's agent opened may carry the confirming try as well: two timeouts at most.
    expect(Math.max(...held)).to.be.below(2 * CHECK_TIMEOUT_MS + 1_000);
    expect(hanging.requests.filter((q) => q.closedAt === null).length, 'no check left hanging').to.equal(0);
    expect(hungResults.length, 'a failure recorded per hung server and round').to.be.at.least(ROUNDS * hungIds.length);
    expect(hungResults.every((r) => !r.up && r.status === 'timeout')).to.equal(true);
    expect(healthyResults.every((r) => r.up && r.status === '200')).to.equal(true);
    for (const [route, s] of Object.entries(api)) {
      expect(s.not200, `${route} answered`).to.equal(0);
      expect(s.p95, `${route} p95`).to.be.below(API_P95_MS);
      expect(s.max, `${route} max`).to.be.below(API_MAX_MS);
    }
  }).timeout(8 * 60_000);
});
