import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { toInt } from '@switchboard/core';
import { campaignContainer, campaignFixture, CampaignFixture } from '../src/shared/tests/support';
import { draftMessage, listOf, sendNow, inboundEndpoint } from '../src/shared/tests/sending-support';
import { signedHeaders as signProviderA } from '@switchboard/provider-a/testing';
import { StatsRebuild } from '../src/events/stats-rebuild';
import { AnalyticsRebuild } from '../src/analytics/rebuild';
import { TrackingLinks } from '../src/sending/tracking-links';
import { UnsubscribeLinks } from '../src/sending/unsubscribe-links';
import { SubscriberWriter } from '../src/audience/subscribers';
import { COUNTERS as LEDGER_COUNTERS, FIRSTS } from '../src/mail-events';

/** Every message counter the ledger keeps. */
const COUNTERS = [...Object.values(LEDGER_COUNTERS), ...Object.values(FIRSTS)].map((c) => c!.message);
const PROVIDER_EVENTS = ['delivered', 'open', 'click', 'bounce', 'unsubscribe', 'spamreport', 'dropped', 'processed'];
const HOUR = 3_600_000;

/** A small deterministic generator: the same stream on every run. */
function random(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 8) % n;
  };
}

/**
 * Issue 23: every mail event goes through one ledger, and both rebuilds replay what it counted. After a
 * random stream over several days (sends, a test send, tracked opens and clicks, provider events with
 * retries, unsubscribes through the mails' links, people subscribing again and leaving again), the
 * statistics rebuild and the analytics rebuild give back exactly the live figures.
 */
describeEachBackend('campaign: the mail-event ledger, replayed by both rebuilds', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let ahead = 0;
  const now = () => new Date(Date.now() + ahead);
  before(async () => {
    sink = await smtpSink();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url, PUBLIC_URL: 'http://mail.test' }, { now });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  const figures = async () => {
    const rows: Array<Record<string, unknown>> = await f.engine
      .knex('analytics_daily')
      .where('organization_id', f.tenant.organizationId)
      .andWhere((mail) =>
        mail.where('metric', 'like', 'mail.%').orWhere('metric', 'like', 'opens.%').orWhere('metric', 'engaged.last'),
      )
      .select('metric', 'day', 'value');
    return Object.fromEntries(
      rows
        .filter((r) => toInt(r.value) !== 0)
        .map((r) => [`${String(r.day).slice(0, 10)} ${r.metric}`, toInt(r.value)]),
    );
  };

  it('gives back the live counters, timelines and daily figures exactly', async function () {
    this.timeout(180_000);
    const emails = Array.from({ length: 12 }, (_, i) => `ledger${i}@example.com`);
    const list = await listOf(f, emails, 'ledger');
    const subscribers: number[] = (await f.api().get('/subscribers?per_page=100').expect(200)).body.data
      .filter((s: { email: string }) => s.email.startsWith('ledger'))
      .map((s: { id: number }) => s.id);
    // One send after the other: this test is about the ledger, not sends at once (three at once on MariaDB
    // stalled twice in CI, session 27, unexplained: docs/reliability.md's note).
    const sent = (ids: number[]) =>
      waitFor(async () => {
        const sends = await f.engine.knex('message_sends').whereIn('message_id', ids).pluck('status');
        return sends.length === ids.length && sends.every((s: string) => s === 'sent');
      }, 30_000);
    const real: number[] = [];
    for (let i = 0; i < 2; i++) {
      real.push(await sendNow(f, [list]));
      await sent(real);
    }
    const dry = await draftMessage(f, { name: 'dry' });
    await f
      .api()
      .post(`/messages/${dry}/send`, { list_ids: [list], test_mode: true })
      .expect(200);
    const messages = [...real, dry];
    await sent(messages);
    const sendOf = new Map<number, number>(
      (await f.engine.knex('message_sends').whereIn('message_id', messages).select('id', 'message_id')).map(
        (r: Record<string, unknown>) => [toInt(r.message_id), toInt(r.id)],
      ),
    );
    const endpoint = await inboundEndpoint(f, { provider: 'provider_a', name: 'SG', secret: 'ledger-secret' });
    const container = campaignContainer(f.engine);
    const tracking = container.resolve(TrackingLinks);
    const unsubscribing = container.resolve(UnsubscribeLinks);
    const local = (url: string) => url.replace('http://mail.test', '');
    const org = f.tenant.organizationId;

    const next = random(2311);
    const batches: string[] = [];
    const deliver = async (body: string) => {
      await request(f.server)
        .post(`/api/campaign/webhook/provider_a?endpoint=${endpoint.id}`)
        .set({ 'content-type': 'application/json', ...signProviderA('ledger-secret', body, now()) })
        .send(body)
        .expect(200);
    };
    for (let step = 0; step < 160; step++) {
      // The stream runs over about a week, so figures fall on several days and hours.
      ahead += next(4) * 0.75 * HOUR;
      const message = messages[next(messages.length)];
      const subscriberId = subscribers[next(subscribers.length)];
      const ids = { organizationId: org, sendId: sendOf.get(message)!, subscriberId };
      switch (next(7)) {
        case 0: {
          const links = await tracking.forMail(ids, { opens: true, clicks: false });
          await request(f.server).get(local(links.open!)).expect(200);
          break;
        }
        case 1: {
          const links = await tracking.forMail(ids, { opens: false, clicks: true });
          await request(f.server)
            .get(local(links.click!('https://acme.test/story')))
            .expect(302);
          break;
        }
        case 2:
        case 3: {
          const events = Array.from({ length: 1 + next(4) }, () => {
            const event = PROVIDER_EVENTS[next(PROVIDER_EVENTS.length)];
            const who = subscribers[next(subscribers.length)];
            return {
              event,
              ...(event === 'bounce' ? { type: next(2) ? 'bounce' : 'blocked' } : {}),
              email: emails[subscribers.indexOf(who)],
              timestamp: Math.floor(now().getTime() / 1000) - next(3) * 3600,
              // A small pool of ids: some events come again under another request.
              sg_event_id: `e${next(120)}`,
              campaign_message_id: String(messages[next(messages.length)]),
              campaign_subscriber_id: String(who),
            };
          });
          batches.push(JSON.stringify(events));
          await deliver(batches[batches.length - 1]);
          break;
        }
        case 4:
          // A provider's retry of an earlier request.
          if (batches.length) await deliver(batches[next(batches.length)]);
          break;
        case 5: {
          if (message === dry) break;
          const link = await unsubscribing.link(org, message, subscriberId);
          await request(f.server).post(local(link)).expect(200);
          break;
        }
        case 6:
          // Back on the list: a later unsubscribe through the same mail's link counts no second time.
          await container.resolve(SubscriberWriter).setStatus(org, subscriberId, 'active');
          break;
      }
    }

    const live = await f.engine
      .knex('messages')
      .whereIn('id', messages)
      .orderBy('id')
      .select(['id', ...COUNTERS]);
    const liveStats = await Promise.all(
      messages.map(async (m) => (await f.api().get(`/messages/${m}/stats`).expect(200)).body.data),
    );
    const liveFigures = await figures();
    const total = (column: string) => live.reduce((n: number, r: Record<string, unknown>) => n + toInt(r[column]), 0);
    for (const column of COUNTERS) expect(total(column), `the stream moved ${column}`).to.be.above(0);
    expect(new Set(Object.keys(liveFigures).map((k) => k.slice(0, 10))).size, 'days with figures').to.be.above(3);

    // Everything the ledger wrote, wrong (a bug, a restore of part of the database) and rebuilt.
    await f.engine
      .knex('messages')
      .whereIn('id', messages)
      .update(Object.fromEntries(COUNTERS.map((c) => [c, 999])));
    await f.engine.knex('message_event_rollups').whereIn('message_id', messages).delete();
    await f.engine.knex('analytics_daily').where('organization_id', org).update({ value: 7 });
    for (const m of messages) await container.resolve(StatsRebuild).run(org, m);
    await container.resolve(AnalyticsRebuild).run(org);

    expect(
      await f.engine
        .knex('messages')
        .whereIn('id', messages)
        .orderBy('id')
        .select(['id', ...COUNTERS]),
    ).to.deep.equal(live);
    for (const [i, m] of messages.entries())
      expect((await f.api().get(`/messages/${m}/stats`).expect(200)).body.data).to.deep.equal(liveStats[i]);
    expect(await figures()).to.deep.equal(liveFigures);
  });
});
