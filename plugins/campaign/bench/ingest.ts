import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { benchBackend, BenchOptions, processCpuSeconds, waitFor } from '@switchboard/core/testing';
import campaign from '../src';
import { startBareProcess } from './bare-process';
import { api, seed } from './client';
import { alternate, cpuRatio, quiet, Rounds, roundsRatio, Run, slices } from './ingest-rounds';

const BATCH = 100;
/**
 * In flight at once, as providers send: SendGrid posts a batch at a time over a handful of connections
 * (8 here), Postmark and Mailgun one event a request over more (16).
 */
const BATCH_CLIENTS = 8;
const SINGLE_CLIENTS = 16;
const MIN_RATIO = 0.5;
/**
 * Each phase's requests in this many slices, the engine and the baselines taking turns in each
 * (ingest-rounds.ts); one at --quick, whose phases are too short to slice.
 */
const FULL_ROUNDS = 3;
const TARGETS = {
  batch_events_per_second: 10_000,
  single_requests_per_second: 1_500,
  single_p99_ms: 50,
  ratio_to_bare_insert: MIN_RATIO,
};
const TYPES = ['delivered', 'open', 'click'] as const;
const SECRETS = { a: 'secret-a-1234', c: 'user:secret-c', e: 'secret-e-1234' };

interface Prepared {
  path?: string;
  body: string;
  headers: Record<string, string>;
}

/** A run as autocannon measured it, before its CPU is added. */
type Sent = Omit<Run, 'cpu_ms_a_request'>;

/** Sends every prepared request once, `connections` at a time, and reports what autocannon measured. */
async function sendAll(
  url: string,
  requests: Prepared[],
  connections: number,
  amount = requests.length,
): Promise<Sent> {
  let next = 0;
  // autocannon stops on its one-second tick: the run's time is to the last answer, not to its end.
  let lastAnswer = 0;
  const started = performance.now();
  const result = await autocannon({
    url,
    connections,
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
    requests: result.requests.total,
    requests_per_second: Math.round(result.requests.total / seconds),
    p99_ms: result.latency.p99,
    non_2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    seconds: Number(seconds.toFixed(2)),
  };
}

/**
 * The MariaDB server's process when the benchmark's database is on this machine (the first `mariadbd`:
 * one server here), else null: its CPU is part of each path's cost.
 */
function databasePid(databaseUrl: string): number | null {
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(databaseUrl).hostname)) return null;
  try {
    return Number(execFileSync('pgrep', ['-x', 'mariadbd|mysqld']).toString().split('\n')[0]) || null;
  } catch {
    return null;
  }
}

/**
 * A phase's run with the CPU it cost, in ms a request: the receiving process's and the database's
 * (the host is shared and noisy: CPU a request moves less than the rate between runs).
 */
async function withCpu(
  pids: { receiver: number; database: number | null },
  phase: () => Promise<Sent>,
  requests: number,
): Promise<Run> {
  const { receiver, database } = pids;
  const before = [processCpuSeconds(receiver), database ? processCpuSeconds(database) : 0];
  const run = await phase();
  const ms = (pid: number | null, at: number) =>
    pid === null ? null : Number((((processCpuSeconds(pid) - at) * 1000) / requests).toFixed(3));
  return { ...run, cpu_ms_a_request: { receiver: ms(receiver, before[0]), database: ms(database, before[1]) } };
}

/**
 * The baselines' process (bare-ingest.ts) on the benchmark's database, up alongside the engine's so that
 * their phases can take turns: it copies the organization's messages and subscribers first (the
 * counted baseline's own rows).
 */
const startBare = (env: Record<string, string>, organizationId: number) =>
  startBareProcess(path.join(__dirname, 'bare-ingest.js'), {
    ...env,
    BENCH_ORG_ID: String(organizationId),
    BENCH_SECRET_A: SECRETS.a,
    BENCH_SECRET_C: SECRETS.c,
    BENCH_SECRET_E: SECRETS.e,
  });

const sign = (secret: string, timestamp: string, body: string) =>
  crypto.createHmac('sha256', secret).update(timestamp).update(body).digest('base64');

/**
 * `npm run bench -- ingest`: provider events into a message sent to 20,000 recipients (100,000 without
 * --quick) on MariaDB + Redis, one `switchboard serve`: provider_a batches of 100 signed events from 8
 * clients, then single-event provider_c (Postmark, HTTP Basic) and provider_e (Mailgun signature, a new
 * token each) requests from 16, each provider on its own. Baselines, in a process of their own: a bare
 * Koa route parsing the batches, the fair one, bare Koa checking the same signature or credentials,
 * parsing, and writing each request's events with one INSERT IGNORE, and that route also adding to the
 * counters the spec names in the same transaction (bare-ingest.ts). Afterwards the message's counters
 * must equal what was sent.
 */
export async function ingestBenchmark({ quick, log, serve, worker }: BenchOptions): Promise<Record<string, unknown>> {
  const recipients = quick ? 20_000 : 100_000;
  const batches = recipients / BATCH;
  const singles = quick ? 2_000 : 8_000;
  const rounds = quick ? 1 : FULL_ROUNDS;
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
        await endpoint('provider_a', SECRETS.a),
        await endpoint('provider_c', SECRETS.c),
        await endpoint('provider_e', SECRETS.e),
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
            'x-twilio-email-event-webhook-signature': sign(SECRETS.a, timestamp, body),
          },
        };
      });
      const basic = `Basic ${Buffer.from(SECRETS.c).toString('base64')}`;
      const singleRequests = Array.from(
        { length: 2 * singles },
        (_, k): { path: string; body: string; headers: Record<string, string> } => {
          const n = batches * BATCH + k;
          const subscriber = pick(n);
          note('delivered', subscriber);
          if (k < singles)
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
                  .createHmac('sha256', SECRETS.e)
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

      const postmark = singleRequests.slice(0, singles);
      const mailgun = singleRequests.slice(singles);

      const database = databasePid(env.DATABASE_URL);
      const bare = await startBare(env, tenant.organizationId);
      const measure = async () => {
        // The engine's processes and the database idle before each turn: no path pays for another's leftovers.
        const settle = () =>
          quiet([server.pid, sender.pid, bare.pid, ...(database ? [database] : [])], processCpuSeconds);
        // Parsing alone is quick: ten rounds of the bodies make a measurable run (once, before the rounds).
        const parseRun = await sendAll(`${bare.url}/parse`, batchRequests, BATCH_CLIENTS, batches * 10);
        /** Each path's runner for a phase's requests: the engine's URL, the baselines' routes ('' and '/counted'). */
        const paths = (requests: Prepared[], clients: number, ours: string, route: string) => {
          const runner = (pid: number, url: string, to?: string) => (indexes: number[]) =>
            withCpu(
              { receiver: pid, database },
              () =>
                sendAll(
                  url,
                  indexes.map((i) => ({ ...requests[i], path: to ?? requests[i].path })),
                  clients,
                ),
              indexes.length,
            );
          return {
            ours: runner(server.pid, ours),
            bare: runner(bare.pid, bare.url, `/${route}`),
            counted: runner(bare.pid, bare.url, `/counted/${route}`),
          };
        };
        /** A phase's `total` requests in rounds, the paths taking turns. */
        const inTurns = (runners: ReturnType<typeof paths>, total: number) =>
          alternate(runners, slices(total, rounds), settle);
        log(`sending ${batches} provider_a batches of ${BATCH} events, ${BATCH_CLIENTS} clients, in ${rounds} rounds`);
        const batchRuns = await inTurns(
          paths(
            batchRequests,
            BATCH_CLIENTS,
            `${server.url}/api/campaign/webhook/provider_a?endpoint=${a}`,
            'provider_a',
          ),
          batches,
        );
        log(
          `sending ${singles} single-event provider_c requests, then ${singles} provider_e, ${SINGLE_CLIENTS} clients`,
        );
        const postmarkRuns = await inTurns(paths(postmark, SINGLE_CLIENTS, `${server.url}/`, 'provider_c'), singles);
        const mailgunRuns = await inTurns(paths(mailgun, SINGLE_CLIENTS, `${server.url}/`, 'provider_e'), singles);
        return { parseRun, batchRuns, postmarkRuns, mailgunRuns };
      };
      const { parseRun, batchRuns, postmarkRuns, mailgunRuns } = await measure().finally(() => bare.stop());
      const [batchRun, postmarkRun, mailgunRun] = [batchRuns.ours, postmarkRuns.ours, mailgunRuns.ours];

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
      const ratios = {
        batches: roundsRatio(batchRun, batchRuns.bare),
        postmark: roundsRatio(postmarkRun, postmarkRuns.bare),
        mailgun: roundsRatio(mailgunRun, mailgunRuns.bare),
      };
      const slowestSingles = [postmarkRun, mailgunRun].sort((x, y) => x.requests_per_second - y.requests_per_second)[0];
      const eventsOf = (run: Rounds) => ({ ...run, events_per_second: run.requests_per_second * BATCH });
      return {
        name: 'ingest',
        database: 'mariadb',
        sizes: {
          recipients,
          batches,
          batch_events: BATCH,
          singles,
          batch_clients: BATCH_CLIENTS,
          single_clients: SINGLE_CLIENTS,
          rounds,
          quick,
        },
        batches: eventsOf(batchRun),
        singles: { provider_c: postmarkRun, provider_e: mailgunRun },
        baseline: {
          bare_koa_json_parse: { ...parseRun, events_per_second: parseRun.requests_per_second * BATCH },
          bare_koa_verify_insert: {
            batches: eventsOf(batchRuns.bare),
            provider_c: postmarkRuns.bare,
            provider_e: mailgunRuns.bare,
          },
          bare_koa_insert_and_count: {
            batches: eventsOf(batchRuns.counted),
            provider_c: postmarkRuns.counted,
            provider_e: mailgunRuns.counted,
          },
        },
        ratio_to_baseline: Number((batchRun.requests_per_second / parseRun.requests_per_second).toFixed(2)),
        // Medians over the rounds of ours / the baseline's rate in the same round.
        ratio_to_bare_insert: ratios,
        // Against a bare route that also adds to the counters the spec names (no marks, timelines, figures, webhooks).
        ratio_to_bare_counted: {
          batches: roundsRatio(batchRun, batchRuns.counted),
          postmark: roundsRatio(postmarkRun, postmarkRuns.counted),
          mailgun: roundsRatio(mailgunRun, mailgunRuns.counted),
        },
        cpu_ratio_to_bare_counted: {
          batches: cpuRatio(batchRun, batchRuns.counted),
          postmark: cpuRatio(postmarkRun, postmarkRuns.counted),
          mailgun: cpuRatio(mailgunRun, mailgunRuns.counted),
        },
        cpu_ratio_to_bare_insert: {
          batches: cpuRatio(batchRun, batchRuns.bare),
          postmark: cpuRatio(postmarkRun, postmarkRuns.bare),
          mailgun: cpuRatio(mailgunRun, mailgunRuns.bare),
        },
        counters,
        expected,
        targets: TARGETS,
        met: {
          batch_events_per_second: batchEventsPerSecond >= TARGETS.batch_events_per_second,
          single_requests_per_second: slowestSingles.requests_per_second >= TARGETS.single_requests_per_second,
          single_p99_ms: Math.max(postmarkRun.p99_ms, mailgunRun.p99_ms) < TARGETS.single_p99_ms,
          ratio_to_bare_insert: Object.values(ratios).every((r) => r >= MIN_RATIO),
          counters_exact:
            JSON.stringify(counters) === JSON.stringify(expected) &&
            [batchRun, postmarkRun, mailgunRun].every((r) => r.non_2xx + r.errors === 0),
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
