import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import type { JobQueues } from '@switchboard/core';
import { SERVICES } from '@switchboard/core';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { listOf, mailsOf, sendNow, inboundEndpoint } from '../../shared/tests/sending-support';
import { STATS_REBUILD_JOB, StatsRebuild } from '../stats-rebuild';
import { signedHeaders as signProviderA } from '@switchboard/provider-a/testing';

const COUNTERS = ['count_delivered', 'count_read', 'count_clicked', 'count_bounced', 'count_stop', 'count_complained'];
const EVENTS = [
  'delivered',
  'open',
  'click',
  'bounce',
  'unsubscribe',
  'spamreport',
  'dropped',
  'processed',
  'deferred',
];

/** A small deterministic generator: the same stream on every run. */
function random(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % n;
  };
}

describeEachBackend('campaign: statistics rebuilt from the records', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  before(async () => {
    sink = await smtpSink();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  it('match the live counters and timelines after a random stream with duplicates and a link unsubscribe', async () => {
    const emails = Array.from({ length: 6 }, (_, i) => `reader${i}@example.com`);
    const message = await sendNow(f, [await listOf(f, emails, 'readers')]);
    await waitFor(
      async () => (await f.api().get(`/messages/${message}`).expect(200)).body.data.status === 'sent',
      15_000,
    );
    const subscribers = new Map<string, number>(
      (await f.api().get('/subscribers?per_page=100').expect(200)).body.data.map((s: { email: string; id: number }) => [
        s.email,
        s.id,
      ]),
    );
    const endpoint = await inboundEndpoint(f, { provider: 'provider_a', name: 'SG', secret: 'rebuild-secret' });
    const next = random(42);
    const at = Math.floor(Date.now() / 1000);
    const stream = Array.from({ length: 80 }, () => {
      const email = emails[next(emails.length)];
      const event = EVENTS[next(EVENTS.length)];
      return {
        event,
        ...(event === 'bounce' ? { type: next(2) ? 'bounce' : 'blocked' } : {}),
        email,
        // Spread over three hours; a small pool of ids, so that some events come again.
        timestamp: at - next(3) * 3600,
        sg_event_id: `e${next(30)}`,
        campaign_message_id: String(message),
        campaign_subscriber_id: String(subscribers.get(email)),
      };
    });
    const deliver = async (events: unknown[]) => {
      const body = JSON.stringify(events);
      await request(f.server)
        .post(`/api/campaign/webhook/provider_a?endpoint=${endpoint.id}`)
        .set({ 'content-type': 'application/json', ...signProviderA('rebuild-secret', body) })
        .send(body)
        .expect(200);
    };
    for (let i = 0; i < stream.length; i += 10) {
      await deliver(stream.slice(i, i + 10));
      if (next(3) === 0) await deliver(stream.slice(i, i + 10));
    }
    // One reader leaves through the mail's own link.
    const [mail] = mailsOf(sink, message);
    const link = /^List-Unsubscribe: <([^>]+)>/m.exec(mail.raw)![1];
    await request(f.server)
      .post(new URL(link).pathname + new URL(link).search)
      .expect(200);

    const live = await f.engine.knex('messages').where({ id: message }).first(COUNTERS);
    const liveStats = (await f.api().get(`/messages/${message}/stats`).expect(200)).body.data;
    expect(Number(live.count_stop), 'the stream holds unsubscribes and the link one').to.be.above(1);
    expect(liveStats.timeline.hourly.length).to.be.above(1);

    // Counters and rollups gone wrong (a bug, a restore of part of the database): rebuilt by the service...
    const wrong = Object.fromEntries(COUNTERS.map((c) => [c, 999]));
    await f.engine.knex('messages').where({ id: message }).update(wrong);
    await f.engine.knex('message_event_rollups').where({ message_id: message }).delete();
    const rebuilt = await campaignContainer(f.engine).resolve(StatsRebuild).run(f.tenant.organizationId, message);
    expect(Object.fromEntries(COUNTERS.map((c) => [c, rebuilt[c]]))).to.deep.equal(
      Object.fromEntries(COUNTERS.map((c) => [c, Number(live[c])])),
    );
    expect((await f.api().get(`/messages/${message}/stats`).expect(200)).body.data).to.deep.equal(liveStats);

    // ... and by a worker, through the job.
    await f.engine.knex('messages').where({ id: message }).update(wrong);
    await campaignContainer(f.engine)
      .resolve<JobQueues>(SERVICES.Queues)
      .get(STATS_REBUILD_JOB)
      .add({ organizationId: f.tenant.organizationId, messageId: message });
    await waitFor(
      async () =>
        Number((await f.engine.knex('messages').where({ id: message }).first('count_read')).count_read) !== 999,
      15_000,
    );
    expect((await f.api().get(`/messages/${message}/stats`).expect(200)).body.data).to.deep.equal(liveStats);
  });
});
