import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { draftMessage, listOf } from '../../shared/tests/sending-support';
import { UnsubscribeLinks } from '../unsubscribe-links';
import { UnsubscribeService } from '../unsubscribe-service';

/**
 * One-click unsubscribes arriving together are applied in one transaction (UnsubscribeService's group
 * commit): each link answered as if alone, a subscriber leaving through two mails at once counted once,
 * a deleted subscriber's link refused without failing the others.
 */
describeEachBackend('campaign: one-click unsubscribes arriving together', (backend) => {
  let f: CampaignFixture;
  before(async function () {
    this.timeout(60_000);
    f = await campaignFixture(backend());
  });
  after(async () => f?.close());

  it('applies each as if alone: one subscriber through two mails counted once, a deleted one refused', async () => {
    await listOf(f, ['ada@example.com', 'bob@example.com', 'cy@example.com'], 'together');
    const org = f.tenant.organizationId;
    const id = async (email: string) =>
      Number((await f.engine.knex('subscribers').where({ organization_id: org, email }).first('id')).id);
    const [ada, bob, cy] = [await id('ada@example.com'), await id('bob@example.com'), await id('cy@example.com')];
    const [first, second] = [await draftMessage(f), await draftMessage(f, { name: 'Second' })];
    const container = campaignContainer(f.engine);
    const links = container.resolve(UnsubscribeLinks);
    const token = async (message: number, subscriber: number) =>
      new URL(await links.link(org, message, subscriber)).searchParams.get('token')!;
    await f.api().delete(`/subscribers/${cy}`).expect(200);
    const tokens = [
      await token(first, bob),
      await token(first, ada),
      await token(second, ada),
      await token(first, cy),
      await token(second, bob),
    ];
    // Submitted in one tick: the first runs at once, the others wait for it and go in one run together.
    const service = container.resolve(UnsubscribeService);
    const answers = await Promise.allSettled(tokens.map((t) => service.unsubscribe(t)));
    expect(answers.map((a) => (a.status === 'fulfilled' ? a.value.email : (a.reason as Error).message))).to.deep.equal([
      'bob@example.com',
      'ada@example.com',
      'ada@example.com',
      'This unsubscribe link is not valid',
      'bob@example.com',
    ]);
    const stats = async (message: number) =>
      (await f.api().get(`/messages/${message}`).expect(200)).body.data.stats.unsubscribed as number;
    // Ada and Bob left through the first mail; their links in the second changed nothing.
    expect([await stats(first), await stats(second)]).to.deep.equal([2, 0]);
    // The organization's runs, idle now, are let go: a process keeps none per organization that ever unsubscribed.
    expect((service as unknown as { runs: Map<number, unknown> }).runs.size).to.equal(0);
    for (const subscriber of [ada, bob])
      expect((await f.api().get(`/subscribers/${subscriber}`).expect(200)).body.data.status).to.equal('unsubscribed');
    // Through the route: a link of a subscriber who left already is answered as before, a deleted one's refused.
    await request(f.server).post(`/api/campaign/unsubscribe?token=${tokens[2]}`).expect(200);
    await request(f.server).post(`/api/campaign/unsubscribe?token=${tokens[3]}`).expect(404);
    expect(await stats(second)).to.equal(0);
  });

  it('a link of a message deleted since unsubscribes all the same, counted nowhere, and fails no other link', async () => {
    await listOf(f, ['dee@example.com', 'eve@example.com'], 'deleted');
    const org = f.tenant.organizationId;
    const id = async (email: string) =>
      Number((await f.engine.knex('subscribers').where({ organization_id: org, email }).first('id')).id);
    const [dee, eve] = [await id('dee@example.com'), await id('eve@example.com')];
    const [gone, kept] = [await draftMessage(f, { name: 'Gone' }), await draftMessage(f, { name: 'Kept' })];
    const links = campaignContainer(f.engine).resolve(UnsubscribeLinks);
    const path = async (message: number, subscriber: number) => {
      const url = new URL(await links.link(org, message, subscriber));
      return url.pathname + url.search;
    };
    const paths = [await path(kept, eve), await path(gone, dee)];
    await f.api().delete(`/messages/${gone}`).expect(200);
    const answers = await Promise.all(
      paths.map((p) =>
        request(f.server)
          .post(p)
          .then((res) => res.status),
      ),
    );
    expect(answers).to.deep.equal([200, 200]);
    for (const subscriber of [dee, eve])
      expect((await f.api().get(`/subscribers/${subscriber}`).expect(200)).body.data.status).to.equal('unsubscribed');
    expect((await f.api().get(`/messages/${kept}`).expect(200)).body.data.stats.unsubscribed).to.equal(1);
  });
});
