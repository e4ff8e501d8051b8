import { expect } from 'chai';
import { createKnex } from '@switchboard/core';
import { smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { PrivateMariaDb } from './support/private-mariadb';
import { PrivateRedis } from './support/private-redis';
import { ServeProcess } from './support/serve-process';
import { WebhookReceiver } from './support/webhook-receiver';
import { logSummary } from './support/log-summary';

const RECIPIENTS = 3000;
/** Unconfirmed subscribers made just before Redis goes: most of their confirmation jobs are still queued. */
const UNCONFIRMED = 1000;
/** A campaign's claims in flight in one process (4 ranges of 50): what may be sent twice. */
const SEND_IN_FLIGHT = 4 * 50;
/** Confirmation mails sent at once by one process (the job's concurrency). */
const CONFIRMATIONS_IN_FLIGHT = 4;
/** Webhook tries in flight in one process (the default concurrency). */
const WEBHOOKS_IN_FLIGHT = 64;
/** How long Redis stays away. */
const REDIS_DOWN_MS = 3_000;
/**
 * Everything done after Redis is back: the send watchdog queues an idle send again after 30 s; the
 * confirmation sweep queues a lost mail 2 to 3 minutes after it was first queued; due webhook
 * deliveries are woken every minute.
 */
const FINISHED_WITHIN_MS = 5 * 60_000;

const CONFIRM_SUBJECT = 'Please confirm your subscription';

/**
 * Redis restarted empty (a default Redis keeps nothing) in the middle of a campaign send, queued double
 * opt-in mails and outbound webhook deliveries, under a real `switchboard serve` on a MariaDB and a Redis
 * of the test's own: the engine finds the work in the database, queues it again and finishes it. Nothing
 * is lost; what is done twice is bounded by the work in flight when Redis went.
 */
describe('faults: Redis restarted empty mid-run [private mariadb+redis]', function () {
  let db: PrivateMariaDb;
  let redis: PrivateRedis;
  let sink: SmtpSink & { accepted: number };
  let receiver: WebhookReceiver;
  let serve: ServeProcess;

  before(async function () {
    this.timeout(180_000);
    db = await PrivateMariaDb.start();
    redis = await PrivateRedis.start();
    sink = await smtpSink({ delayMs: 5 });
    receiver = await WebhookReceiver.start(20);
    serve = new ServeProcess({
      DATABASE_URL: db.serverUrl(),
      REDIS_URL: redis.url,
      REDIS_PREFIX: 'faults:',
      PLUGINS: 'campaign',
      SMTP_URL: sink.url,
      RATE_LIMIT_SCALE: '1000',
    });
    await serve.setUp();
    await serve.start();
  });
  after(async () => {
    await serve?.dispose();
    await receiver?.close();
    await sink?.close();
    await redis?.dispose();
    await db?.dispose();
  });

  const call = async (method: string, route: string, body?: object) => {
    const res = await serve.fetch(`/api/campaign${route}`, { method, body: body && JSON.stringify(body) });
    expect(res.status, `${method} ${route}`).to.be.below(300);
    return ((await res.json()) as { data: any }).data;
  };
  const importSubscribers = async (prefix: string, count: number, extra: object) => {
    for (let start = 0; start < count; start += 1000) {
      const subscribers = Array.from({ length: Math.min(1000, count - start) }, (_, i) => ({
        email: `${prefix}${start + i}@redis.test`,
      }));
      await call('POST', '/subscribers/batch', { subscribers, ...extra });
    }
  };
  const perRecipient = (match: (raw: string) => boolean) => {
    const counts = new Map<string, number>();
    for (const m of sink.mails) if (match(m.raw)) for (const to of m.to) counts.set(to, (counts.get(to) ?? 0) + 1);
    return counts;
  };
  const twiceOf = (counts: Map<string, number>) => [...counts.values()].filter((n) => n > 1).length;

  it('rebuilds the send, the confirmation mails and the webhook deliveries from the database', async () => {
    await call('POST', '/webhooks', { name: 'Receiver', url: receiver.url, events: ['subscriber.created'] });
    const list = (await call('POST', '/lists', { name: 'All', code: 'all' })).id;
    await importSubscribers('r', RECIPIENTS, { lists: [list], skip_confirmation: true });
    const message = (
      await call('POST', '/messages', { name: 'M', subject: 'Campaign', content_text: 'Hi', from_email: 'a@acme.test' })
    ).id;
    const isCampaign = (raw: string) => new RegExp(`^X-Campaign-Message-Id: ${message}\\r?$`, 'im').test(raw);
    const isConfirmation = (raw: string) => raw.includes(`Subject: ${CONFIRM_SUBJECT}`);
    await call('POST', `/messages/${message}/send`, { list_ids: [list] });
    await waitFor(() => perRecipient(isCampaign).size >= 300, 60_000);
    await importSubscribers('u', UNCONFIRMED, { skip_confirmation: false });

    const at = {
      campaign: perRecipient(isCampaign).size,
      confirmations: perRecipient(isConfirmation).size,
      webhooks: receiver.taken.size,
    };
    await redis.kill();
    const goneAt = Date.now();
    // While Redis is away the API keeps answering (rate limits count in memory; queueing fails: a 5xx, or
    // the sweep's business later).
    const health = await serve.fetch('/health');
    const list200 = await serve.fetch('/api/campaign/lists');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, goneAt + REDIS_DOWN_MS - Date.now())));
    await redis.start();
    const backAt = Date.now();

    const knex = createKnex(db.serverUrl());
    try {
      const deliveries = async () =>
        Object.fromEntries(
          (await knex('webhook_deliveries').groupBy('state').select('state', knex.raw('count(*) as n'))).map(
            (r: { state: string; n: unknown }) => [r.state, Number(r.n)],
          ),
        );
      const finished = {} as Record<string, number>;
      await waitFor(
        async () => {
          const sent = (await call('GET', `/messages/${message}`)).status === 'sent';
          if (sent) finished.send ??= Date.now() - backAt;
          if (perRecipient(isConfirmation).size === UNCONFIRMED) finished.confirmations ??= Date.now() - backAt;
          if ((await deliveries()).delivered === RECIPIENTS + UNCONFIRMED) finished.webhooks ??= Date.now() - backAt;
          return Object.keys(finished).length === 3;
        },
        FINISHED_WITHIN_MS,
        1000,
      ).catch(() => undefined);

      const campaign = perRecipient(isCampaign);
      const confirmations = perRecipient(isConfirmation);
      const figures = {
        done_when_redis_went: at,
        redis_down_ms: backAt - goneAt,
        during: { health: health.status, lists: list200.status },
        finished_after_ms: finished,
        campaign: { recipients: RECIPIENTS, mailed: campaign.size, twice: twiceOf(campaign) },
        confirmations: { asked: UNCONFIRMED, mailed: confirmations.size, twice: twiceOf(confirmations) },
        webhooks: {
          events: RECIPIENTS + UNCONFIRMED,
          delivered: receiver.taken.size,
          twice: receiver.twice,
          states: await deliveries(),
        },
        serve_alive: serve.alive,
        log_after_redis_went: logSummary(
          serve.logLines.filter((l) => l.at >= goneAt).map((l) => l.line),
          10,
        ),
      };
      console.log(`      figures ${JSON.stringify(figures)}`);

      expect(serve.alive, 'serve still runs').to.equal(true);
      expect(health.status).to.equal(200);
      expect(list200.status).to.equal(200);
      expect(at.confirmations, 'confirmation mails were still queued when Redis went').to.be.below(UNCONFIRMED);
      expect(campaign.size, 'recipients mailed').to.equal(RECIPIENTS);
      expect([...campaign.values()].every((n) => n <= 2)).to.equal(true);
      expect(twiceOf(campaign)).to.be.at.most(SEND_IN_FLIGHT);
      expect((await call('GET', `/messages/${message}`)).delivery).to.include({
        recipients: RECIPIENTS,
        sent: RECIPIENTS,
        failed: 0,
        queued: 0,
      });
      expect(confirmations.size, 'confirmation mails').to.equal(UNCONFIRMED);
      expect(twiceOf(confirmations)).to.be.at.most(CONFIRMATIONS_IN_FLIGHT);
      expect(await knex('confirmation_mails_due').count({ n: '*' }).first()).to.deep.include({ n: 0 });
      expect(await deliveries()).to.deep.equal({ delivered: RECIPIENTS + UNCONFIRMED });
      expect(receiver.taken.size).to.equal(RECIPIENTS + UNCONFIRMED);
      expect(receiver.twice).to.be.at.most(WEBHOOKS_IN_FLIGHT);
    } finally {
      await knex.destroy();
    }
  }).timeout(FINISHED_WITHIN_MS + 180_000);
});
