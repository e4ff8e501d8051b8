import type { Knex } from 'knex';
import { benchBackend, BenchOptions, timeRequests } from '@switchboard/core/testing';
import campaign from '../src';
import { AnalyticsRebuild } from '../src/analytics/rebuild';
import { api } from './client';

const TARGETS = { p95_ms: 200, p50_ratio: 3 };
const SAMPLES = 60;
const CHUNK = 2_000;
const DAY = 86_400_000;
const MESSAGES = 5;
const EVENT_TYPES = ['delivered', 'delivered', 'delivered', 'opened', 'opened', 'clicked', 'bounced', 'unsubscribed'];
const ENDPOINTS = [
  '/analytics/dashboard?period=30d',
  '/analytics/dashboard?period=1y',
  '/analytics/growth',
  '/analytics/performance?period=90d',
  '/analytics/engagement',
];

/** Writes rows `count` at a time, two statements in flight (the seeding is not what is measured). */
async function insertAll(knex: Knex, table: string, total: number, row: (i: number) => object, from = 0) {
  let next = from;
  const worker = async () => {
    while (next < total) {
      const start = next;
      next = Math.min(total, next + CHUNK);
      const rows = [];
      for (let i = start; i < next; i++) rows.push(row(i));
      await knex(table).insert(rows);
    }
  };
  await Promise.all([worker(), worker()]);
}

/**
 * `npm run bench -- analytics`: one organization on MariaDB with 100,000 subscribers and 500,000 event
 * records, then grown to 1,000,000 and 5,000,000 (`--quick`: 10,000 / 50,000, then 100,000 / 500,000),
 * spread over a year, with five sent messages. Rows are written straight with knex (subscribers without
 * search rows: no search is measured), the daily figures made by `campaign:analytics:rebuild`'s service,
 * then every analytics endpoint is read through `switchboard serve`, 60 times in a row at each size.
 * Targets: p95 <= 200 ms at the large size, p50(large) / p50(small) <= 3.
 */
export async function analyticsBenchmark({ quick, log, serve }: BenchOptions): Promise<Record<string, unknown>> {
  const sizes = quick
    ? [
        { subscribers: 10_000, events: 50_000 },
        { subscribers: 100_000, events: 500_000 },
      ]
    : [
        { subscribers: 100_000, events: 500_000 },
        { subscribers: 1_000_000, events: 5_000_000 },
      ];
  const { backend, engine, tenant, env } = await benchBackend([campaign]);
  const knex = engine.knex;
  const org = tenant.organizationId;
  const now = Date.now();
  const yearAgo = now - 365 * DAY;
  try {
    const messages: number[] = [];
    const sends: number[] = [];
    for (let m = 0; m < MESSAGES; m++) {
      const at = new Date(now - (m + 1) * 20 * DAY);
      const [message] = await knex('messages').insert({
        organization_id: org,
        name: `Message ${m}`,
        subject: `Subject ${m}`,
        status: 'sent',
        sent_at: at,
        created_at: at,
        updated_at: at,
      });
      messages.push(Number(message));
      const [send] = await knex('message_sends').insert({
        organization_id: org,
        message_id: message,
        status: 'sent',
        list_ids: '[]',
        created_at: at,
        updated_at: at,
        finished_at: at,
      });
      sends.push(Number(send));
    }
    const firstSubscriber = Number((await knex('subscribers').max({ id: 'id' }))[0].id ?? 0) + 1;
    const subscriber = (i: number) => {
      const created = new Date(yearAgo + ((i * 7919) % 365) * DAY + (i % 86_400) * 1000);
      const status = i % 10 === 0 ? 'unsubscribed' : i % 31 === 0 ? 'bounced' : 'active';
      return {
        organization_id: org,
        email: `reader${i}@example.com`,
        status,
        meta_data: '{}',
        unsubscribed_at: status === 'unsubscribed' ? new Date(created.getTime() + 30 * DAY) : null,
        created_at: created,
        updated_at: created,
      };
    };
    // The engagement row of every third subscriber (the j-th of subscriber 3j).
    const engagement = (j: number) => ({
      subscriber_id: firstSubscriber + 3 * j,
      last_engaged_day: new Date(now - ((3 * j) % 120) * DAY).toISOString().slice(0, 10),
    });
    const event = (i: number) => {
      const at = new Date(now - (i % 300) * DAY - (i % 86_400) * 1000);
      const type = EVENT_TYPES[i % EVENT_TYPES.length];
      return {
        organization_id: org,
        provider: 'provider_a',
        provider_event_id: `bench-${i}`,
        message_id: messages[i % MESSAGES],
        subscriber_id: firstSubscriber + (i % 100_000),
        event_type: type,
        bounce: type === 'bounced' ? 'hard' : null,
        payload: '{}',
        event_at: at,
        received_at: at,
        receipt: 'bench',
      };
    };
    const server = await serve(env);
    const client = api([server.url], tenant.token);
    const results: Array<Record<string, unknown>> = [];
    try {
      let subscribers = 0;
      let events = 0;
      for (const size of sizes) {
        log(`seeding ${size.subscribers} subscribers and ${size.events} event records`);
        await insertAll(knex, 'subscribers', size.subscribers, subscriber, subscribers);
        // A third of them engaged within the last 120 days: theirs are the engagement rows (first opens write them).
        await insertAll(
          knex,
          'subscriber_engagement',
          Math.ceil(size.subscribers / 3),
          engagement,
          Math.ceil(subscribers / 3),
        );
        await insertAll(knex, 'inbound_events', size.events, event, events);
        if (subscribers === 0)
          for (let m = 0; m < MESSAGES; m++)
            await insertAll(knex, 'send_recipients', Math.min(size.subscribers, 10_000 * (quick ? 1 : 10)), (i) => ({
              send_id: sends[m],
              subscriber_id: firstSubscriber + i,
              state: 'sent',
              attempts: 1,
              sent_at: new Date(now - (m + 1) * 20 * DAY),
              opened_at: i % 3 === m % 3 ? new Date(now - (m + 1) * 20 * DAY + (i % 48) * 3_600_000) : null,
              clicked_at: i % 9 === m % 9 ? new Date(now - (m + 1) * 20 * DAY + (i % 48) * 3_600_000) : null,
            }));
        subscribers = size.subscribers;
        events = size.events;
        const counts = await knex('subscribers')
          .where('organization_id', org)
          .groupBy('status')
          .select('status', knex.raw('count(*) as n'));
        for (const c of counts as Array<{ status: string; n: unknown }>)
          await knex('subscriber_counts')
            .insert({ organization_id: org, status: c.status, count: Number(c.n) })
            .onConflict(['organization_id', 'status'])
            .merge(['count']);
        const rebuildStarted = performance.now();
        const rebuilt = await engine.contexts.get('campaign')!.container.resolve(AnalyticsRebuild).run(org);
        const rebuildSeconds = Number(((performance.now() - rebuildStarted) / 1000).toFixed(1));
        log(`  rebuilt ${rebuilt.rows} daily rows in ${rebuildSeconds} s; reading`);
        const endpoints: Record<string, { p50_ms: number; p95_ms: number }> = {};
        for (const path of ENDPOINTS) {
          await client.get(path);
          endpoints[path] = await timeRequests(() => client.get(path).then(() => undefined), SAMPLES);
        }
        results.push({ ...size, daily_rows: rebuilt.rows, rebuild_seconds: rebuildSeconds, endpoints });
      }
    } finally {
      await server.stop();
    }
    const [small, large] = results as Array<{ endpoints: Record<string, { p50_ms: number; p95_ms: number }> }>;
    const ratios = Object.fromEntries(
      ENDPOINTS.map((p) => [p, Number((large.endpoints[p].p50_ms / small.endpoints[p].p50_ms).toFixed(2))]),
    );
    const worstP95 = Math.max(...ENDPOINTS.map((p) => large.endpoints[p].p95_ms));
    const worstRatio = Math.max(...Object.values(ratios));
    return {
      name: 'analytics',
      database: 'mariadb',
      quick,
      sizes: results,
      p50_ratio_large_to_small: ratios,
      targets: TARGETS,
      met: { p95_ms: worstP95 <= TARGETS.p95_ms, p50_ratio: worstRatio <= TARGETS.p50_ratio },
    };
  } finally {
    await engine.close();
    await backend.dispose();
  }
}
