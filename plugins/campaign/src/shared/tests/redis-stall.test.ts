import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { embeddedBackend, proxiedTestRedis, TestBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from './support';

/**
 * The API while Redis stalls (connections taken, nothing answered: session 36): work the database holds is
 * answered once the queue's 5 s are up and left to its sweep; a Mailgun delivery, whose one-time token lives in Redis, is
 * refused with 503 for the provider to retry. Each had waited for as long as the stall lasted.
 */
describe('campaign: the API while Redis stalls [redis]', () => {
  let backend: TestBackend;
  let proxy: Awaited<ReturnType<typeof proxiedTestRedis>>['proxy'];
  let f: CampaignFixture;
  before(async function () {
    this.timeout(60_000);
    const redis = await proxiedTestRedis();
    proxy = redis.proxy;
    backend = embeddedBackend();
    f = await campaignFixture(backend, { REDIS_URL: redis.url });
  });
  after(async function () {
    this.timeout(30_000);
    await proxy?.close();
    await f?.close();
    await backend?.dispose();
  });

  const timed = async <T>(work: () => Promise<T>) => {
    const started = Date.now();
    const result = await work();
    return { result, ms: Date.now() - started };
  };

  it('answers what the database holds within seconds, and a Mailgun delivery 503', async () => {
    const endpoint = (
      await f
        .api()
        .post('/inbound-webhooks', { provider: 'provider_b', name: 'MG', secret: 'mailgun-signing-key-1' })
        .expect(201)
    ).body.data.id;
    // Each queue's connections open before Redis freezes, as in a process that ran a while.
    await f.api().post('/subscribers', { email: 'before@acme.test', confirmed: false }).expect(201);
    await f.api().post('/changelog/subscribe', { email: 'before@acme.test' }).expect(201);
    proxy.blackHole({ later: true });

    const created = await timed(() =>
      f.api().post('/subscribers', { email: 'stalled@acme.test', confirmed: false }).expect(201),
    );
    expect(created.result.body.data).to.include({ status: 'unconfirmed', confirmation_sent: true });
    expect(created.ms).to.be.below(15_000);
    // Its mail is recorded: the sweep queues it once Redis answers again.
    expect(
      await f.engine
        .knex('confirmation_mails_due')
        .where({ subscriber_id: created.result.body.data.id })
        .first('due_at'),
    ).to.not.equal(undefined);

    const subscribed = await timed(() => f.api().post('/changelog/subscribe', { email: 'dev@acme.test' }).expect(201));
    expect(subscribed.result.body.data.confirmed).to.equal(false);
    expect(subscribed.ms).to.be.below(15_000);
    const address = await f.engine
      .knex('changelog_addresses as a')
      .join('changelog_subscriptions as s', 's.address_id', 'a.id')
      .where('s.id', subscribed.result.body.data.id)
      .first('a.ask_subscription_id', 'a.ask_due_at');
    expect(address.ask_subscription_id).to.equal(subscribed.result.body.data.id);
    expect(address.ask_due_at).to.not.equal(null);

    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = crypto.randomBytes(25).toString('hex');
    const signature = crypto
      .createHmac('sha256', 'mailgun-signing-key-1')
      .update(timestamp + token)
      .digest('hex');
    const delivery = await timed(() =>
      request(f.server)
        .post(`/api/campaign/webhook/provider_b?endpoint=${endpoint}`)
        .set('content-type', 'application/json')
        .send({
          signature: { timestamp, token, signature },
          'event-data': {
            event: 'delivered',
            id: 'mg-stalled-1',
            timestamp: Number(timestamp),
            recipient: 'x@acme.test',
          },
        }),
    );
    expect(delivery.result.status).to.equal(503);
    expect(delivery.result.headers['retry-after']).to.equal('2');
    expect(delivery.result.body.error).to.include({ code: 'SERVICE_UNAVAILABLE' });
    expect(delivery.result.body.error.message).to.contain('Redis cannot be reached');
    expect(delivery.ms).to.be.below(10_000);
  }).timeout(60_000);
});
