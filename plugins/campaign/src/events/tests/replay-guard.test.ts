import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { Locks, SERVICES } from '@switchboard/core';
import { createTenant, describeEachBackend, TestTenant } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { MailEventLedger } from '../../mail-events';
import { requestReplayGuard } from '../replay-guard';

describeEachBackend('campaign: one-time webhook tokens (issue 26)', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend());
  });
  after(async () => {
    await f?.close();
  });

  const endpointOf = async (secret: string, tenant?: TestTenant) =>
    (await f.api(tenant).post('/inbound-webhooks', { provider: 'provider_b', name: 'MG', secret }).expect(201)).body
      .data.id as number;
  /** A Mailgun JSON webhook carrying one event, signed with `secret` under a fresh token. */
  const signed = (secret: string, eventId: string) => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = crypto.randomBytes(25).toString('hex');
    const signature = crypto
      .createHmac('sha256', secret)
      .update(timestamp + token)
      .digest('hex');
    return JSON.stringify({
      signature: { timestamp, token, signature },
      'event-data': { event: 'delivered', id: eventId, timestamp: Number(timestamp), recipient: 'x@example.com' },
    });
  };
  const post = (endpoint: number, body: string) =>
    request(f.server)
      .post(`/api/campaign/webhook/provider_b?endpoint=${endpoint}`)
      .set('content-type', 'application/json')
      .send(body);
  const stored = async (endpoint: number) =>
    Number((await f.engine.knex('inbound_events').where({ webhook_endpoint_id: endpoint }).count({ n: '*' }))[0].n);

  it("takes a token per endpoint: the same token at another organization's endpoint is not a replay", async () => {
    // One Mailgun account's signing key given to two organizations' endpoints.
    const ours = await endpointOf('one-account-key');
    const theirs = await endpointOf('one-account-key', await createTenant(f.engine));
    const body = signed('one-account-key', 'mg-shared-1');
    expect((await post(ours, body).expect(200)).body.data).to.deep.equal({ received: 1, recorded: 1 });
    expect((await post(theirs, body).expect(200)).body.data).to.deep.equal({ received: 1, recorded: 1 });
    // A true replay, at the same endpoint, is still refused.
    expect((await post(ours, body).expect(401)).body.error.message).to.contain('used before');
    expect(await stored(ours)).to.equal(1);
    expect(await stored(theirs)).to.equal(1);
  });

  it('spends a token with its events: a delivery that failed after verification is accepted on retry', async () => {
    const endpoint = await endpointOf('retry-key');
    const body = signed('retry-key', 'mg-retried-1');
    const apply = MailEventLedger.prototype.apply;
    MailEventLedger.prototype.apply = async () => {
      throw new Error('the database fails while the events are recorded');
    };
    try {
      await post(endpoint, body).expect(500);
    } finally {
      MailEventLedger.prototype.apply = apply;
    }
    expect(await stored(endpoint), 'nothing kept of the failed delivery').to.equal(0);

    // The provider's retries of the same token, two at once: one records the event, the other is refused.
    const answers = await Promise.all([post(endpoint, body), post(endpoint, body)]);
    expect(answers.map((a) => a.status).sort()).to.deep.equal([200, 401]);
    expect(answers.find((a) => a.status === 200)!.body.data).to.deep.equal({ received: 1, recorded: 1 });
    expect(await stored(endpoint)).to.equal(1);
    // Spent now: the same token again is a replay.
    await post(endpoint, body).expect(401);
  });

  it('a token a crashed request took is free again once its hold lapses, and spent for its full time', async () => {
    const locks = f.engine.container.resolve<Locks>(SERVICES.Locks);
    const key = `mailgun:${crypto.randomUUID()}`;
    // The first request takes the token and its process dies: neither spent nor given back.
    expect(await requestReplayGuard(locks, 7, 100).seen(key, 600)).to.equal(false);
    expect(await requestReplayGuard(locks, 7, 100).seen(key, 600), 'held while in flight').to.equal(true);
    await new Promise((resolve) => setTimeout(resolve, 250));
    const retry = requestReplayGuard(locks, 7, 100);
    expect(await retry.seen(key, 600), "the provider's retry").to.equal(false);
    await retry.spend();
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await requestReplayGuard(locks, 7, 100).seen(key, 600), 'spent').to.equal(true);
  });

  it("says how long it remembers a token: for good with Redis, 5 minutes in one process's memory", () => {
    const locks = f.engine.container.resolve<Locks>(SERVICES.Locks);
    const guard = requestReplayGuard(locks, 7);
    expect(guard.rememberedSeconds).to.equal(backend().redisUrl ? undefined : 300);
  });
});
