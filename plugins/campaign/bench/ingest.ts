import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { benchBackend, BenchOptions, waitFor } from '@switchboard/core/testing';
import campaign from '../src';
import { api, seed } from './client';

const BATCH = 100;
const CONNECTIONS = 20;
const TARGETS = { batch_events_per_second: 10_000, single_requests_per_second: 1_500, single_p99_ms: 50 };
const TYPES = ['delivered', 'open', 'click'] as const;

interface Run {
  requests_per_second: number;
  p99_ms: number;
  non_2xx: number;
  errors: number;
  seconds: number;
}

/** Sends every prepared request once, CONNECTIONS at a time, and reports what autocannon measured. */
async function sendAll(
  url: string,
  requests: Array<{ path?: string; body: string; headers: Record<string, string> }>,
  amount = requests.length,
): Promise<Run> {
  let next = 0;
  // autocannon stops on its one-second tick: the run's time is to the last answer, not to its end.
  let lastAnswer = 0;
  const started = performance.now();
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    amount,
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => {
          const { path: to, body, headers } = requests[next++ % requests.length];
          return { ...req, path: to ?? req.path, body, headers: { ...req.headers, ...headers } };
        },
        onResponse: () => {
          lastAnswer = performance.now();
        },
      },
    ],
  });
  const seconds = ((lastAnswer || performance.now()) - started) / 1000;
  return {
    requests_per_second: Math.round(result.requests.total / seconds),
    p99_ms: result.latency.p99,
    non_2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    seconds: Number(seconds.toFixed(2)),
  };
}

/** The baseline: a bare Koa route parsing the same JSON, in a process of its own. */
async function bareParse(bodies: Array<{ body: string; headers: Record<string, string> }>): Promise<Run> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, [path.join(__dirname, 'bare-ingest.js')], {
    env: { ...process.env, PORT: String(port) },
    stdio: 'ignore',
  });
  try {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/`).catch(() => null))?.ok === true, 10_000);
    // Parsing alone is quick: ten rounds of the bodies make a measurable run.
    return await sendAll(`http://127.0.0.1:${port}/parse`, bodies, bodies.length * 10);
  } finally {
    child.kill('SIGTERM');
  }
}

const sign = (secret: string, timestamp: string, body: string) =>
  crypto.createHmac('sha256', secret).update(timestamp).update(body).digest('base64');

/**
 * `npm run bench -- ingest`: provider events into a message with 100,000 recipients (10,000 with
 * --quick) on MariaDB + Redis, one `switchboard serve`: provider_a batches of 100 signed events, then
 * single-event provider_c and provider_e requests; the baseline is a bare Koa route parsing the same
 * JSON. Afterwards the message's counters must equal what was sent.
 */
export async function ingestBenchmark({ quick, log, serve, worker }: BenchOptions): Promise<Record<string, unknown>> {
  const recipients = quick ? 10_000 : 100_000;
  const batches = quick ? 100 : 400;
  const singles = quick ? 2_000 : 8_000;
  const { backend, engine, tenant, env } = await benchBackend([campaign]);
  try {
    await engine.close();
    const server = await serve(env);
    const sender = await worker(env);
    try {
      const client = api([server.url], tenant.token);
      const list = (await client.post('/lists', { name: 'All', code: 'all' })).data.id;
      log(`importing ${recipients} subscribers`);
      await seed(client, 0, recipients, (n) => ({ email: `s${n}@ingest.example`, lists: [list] }), log);
      const message = (
        await client.post('/messages', {
          name: 'Ingest',
          subject: 'S',
          content_text: 'T',
          from_email: 'a@acme.example',
        })
      ).data.id;
      log('recording the send in test mode (every recipient, nothing delivered)');
      await client.post(`/messages/${message}/send`, { list_ids: [list], test_mode: true });
      await waitFor(
        async () => (await client.get(`/messages/${message}`)).data.delivery?.status === 'sent',
        10 * 60_000,
      );
      const ids: number[] = [];
      for (let page = 1; ids.length < recipients; page++) {
        const got = (await client.get(`/subscribers?per_page=100&page=${page}`)).data as Array<{ id: number }>;
        if (!got.length) break;
        ids.push(...got.map((s) => s.id));
      }
      const endpoint = async (provider: string, secret: string) =>
        (await client.post('/inbound-webhooks', { provider, name: provider, secret })).data.id as number;
      const [a, c, e] = [
        await endpoint('provider_a', 'secret-a-1234'),
        await endpoint('provider_c', 'user:secret-c'),
        await endpoint('provider_e', 'secret-e-1234'),
      ];

      // What is sent, to check the counters against afterwards.
      const eventCounts = { delivered: 0, open: 0, click: 0 };
      const opened = new Set<number>();
      const clicked = new Set<number>();
      const pick = (n: number) => ids[(n * 7919) % ids.length];
      const note = (type: string, subscriber: number) => {
        eventCounts[type as keyof typeof eventCounts]++;
        // A click opens its mail too (unique_opened), though it is no open event (opened).
        if (type !== 'delivered') opened.add(subscriber);
        if (type === 'click') clicked.add(subscriber);
      };
      const timestamp = String(Math.floor(Date.now() / 1000));
      const batchRequests = Array.from({ length: batches }, (_, b) => {
        const events = Array.from({ length: BATCH }, (_, i) => {
          const n = b * BATCH + i;
          const type = TYPES[n % TYPES.length];
          const subscriber = pick(n);
          note(type, subscriber);
          return {
            event: type,
            email: `s${n}@ingest.example`,
            timestamp: Number(timestamp),
            sg_event_id: `ev-${n}`,
            ...(type === 'click' ? { url: 'https://acme.example/a' } : {}),
            campaign_message_id: String(message),
            campaign_subscriber_id: String(subscriber),
          };
        });
        const body = JSON.stringify(events);
        return {
          body,
          headers: {
            'content-type': 'application/json',
            'x-twilio-email-event-webhook-timestamp': timestamp,
            'x-twilio-email-event-webhook-signature': sign('secret-a-1234', timestamp, body),
          },
        };
      });
      const basic = `Basic ${Buffer.from('user:secret-c').toString('base64')}`;
      const singleRequests = Array.from(
        { length: singles },
        (_, k): { path: string; body: string; headers: Record<string, string> } => {
          const n = batches * BATCH + k;
          const subscriber = pick(n);
          note('delivered', subscriber);
          if (k % 2 === 0)
            return {
              path: `/api/campaign/webhook/provider_c?endpoint=${c}`,
              body: JSON.stringify({
                RecordType: 'Delivery',
                MessageID: `pm-${n}`,
                Recipient: `s${n}@ingest.example`,
                DeliveredAt: new Date().toISOString(),
                Metadata: { campaign_message_id: String(message), campaign_subscriber_id: String(subscriber) },
              }),
              headers: { 'content-type': 'application/json', authorization: basic },
            };
          const token = crypto.randomBytes(25).toString('hex');
          return {
            path: `/api/campaign/webhook/provider_e?endpoint=${e}`,
            body: JSON.stringify({
              signature: {
                timestamp,
                token,
                signature: crypto
                  .createHmac('sha256', 'secret-e-1234')
                  .update(timestamp + token)
                  .digest('hex'),
              },
              'event-data': {
                event: 'delivered',
                email: `s${n}@ingest.example`,
                ts_event: Number(timestamp),
                'X-Mailin-custom': JSON.stringify({
                  campaign_message_id: String(message),
                  campaign_subscriber_id: String(subscriber),
                }),
              },
            }),
            headers: { 'content-type': 'application/json' },
          };
        },
      );

      log(`sending ${batches} provider_a batches of ${BATCH} events`);
      const batchRun = await sendAll(`${server.url}/api/campaign/webhook/provider_a?endpoint=${a}`, batchRequests);
      log(`sending ${singles} single-event provider_c and provider_e requests`);
      // Two endpoints: each request names its path.
      const singleRun = await sendAll(`${server.url}/`, singleRequests);
      log('measuring the baseline: a bare Koa route parsing the same JSON');
      const bare = await bareParse(batchRequests);

      const counters = await (async () => {
        const m = (await client.get(`/messages/${message}`)).data;
        const stats = (await client.get(`/messages/${message}/stats`)).data.summary;
        const { opened, clicked, unique_opened, unique_clicked } = m.stats;
        return { delivered: stats.delivered, opened, clicked, unique_opened, unique_clicked };
      })();
      // Every event counts; the unique figures are of the mails opened and clicked.
      const expected = {
        delivered: eventCounts.delivered,
        opened: eventCounts.open,
        clicked: eventCounts.click,
        unique_opened: opened.size,
        unique_clicked: clicked.size,
      };
      const batchEventsPerSecond = Math.round(batchRun.requests_per_second * BATCH);
      return {
        name: 'ingest',
        database: 'mariadb',
        sizes: { recipients, batches, batch_events: BATCH, singles, connections: CONNECTIONS, quick },
        batches: { ...batchRun, events_per_second: batchEventsPerSecond },
        singles: singleRun,
        baseline: { bare_koa_json_parse: { ...bare, events_per_second: bare.requests_per_second * BATCH } },
        ratio_to_baseline: Number((batchRun.requests_per_second / bare.requests_per_second).toFixed(2)),
        counters,
        expected,
        targets: TARGETS,
        met: {
          batch_events_per_second: batchEventsPerSecond >= TARGETS.batch_events_per_second,
          single_requests_per_second: singleRun.requests_per_second >= TARGETS.single_requests_per_second,
          single_p99_ms: singleRun.p99_ms < TARGETS.single_p99_ms,
          counters_exact:
            JSON.stringify(counters) === JSON.stringify(expected) && batchRun.non_2xx + singleRun.non_2xx === 0,
        },
      };
    } finally {
      await sender.stop();
      await server.stop();
    }
  } finally {
    await backend.dispose();
  }
}
