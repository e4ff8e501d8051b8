import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { draftMessage, listOf } from '../../shared/tests/sending-support';
import { UnsubscribeLinks } from '../unsubscribe-links';

const PEOPLE = 1000;
const IN_FLIGHT = 25;

/**
 * Issue 24: mailbox providers send one-click unsubscribes (RFC 8058) from a few addresses. 1,000 of them from
 * one address, ten times the shipped limit of 100 requests an hour per address: every one is applied, none
 * refused. Links that are not valid still count, and are refused once the address has spent its limit.
 * The 5,000 in a minute is a rate: `npm run bench -- one-click` measures it.
 */
describeEachBackend('campaign: one-click unsubscribes in volume from one address', (backend) => {
  let f: CampaignFixture;
  before(async function () {
    this.timeout(60_000);
    f = await campaignFixture(backend(), { RATE_LIMIT_SCALE: '1' });
  });
  after(async () => f?.close());

  it('applies 1,000 from one address, none refused; refuses bad links past the limit', async function () {
    this.timeout(90_000);
    const emails = Array.from({ length: PEOPLE }, (_, i) => `leaving${i}@example.com`);
    await listOf(f, emails, 'many');
    const message = await draftMessage(f);
    const org = f.tenant.organizationId;
    const ids: number[] = await f.engine.knex('subscribers').where({ organization_id: org }).orderBy('id').pluck('id');
    expect(ids).to.have.length(PEOPLE);
    const links = campaignContainer(f.engine).resolve(UnsubscribeLinks);
    const paths = await Promise.all(
      ids.map(async (id) => {
        const url = new URL(await links.link(org, message, id));
        return url.pathname + url.search;
      }),
    );
    const statuses = new Map<number, number>();
    for (let next = 0; next < paths.length;) {
      const batch = paths.slice(next, (next += IN_FLIGHT));
      // What Gmail sends: a POST with List-Unsubscribe=One-Click as its form body.
      const answers = await Promise.all(
        batch.map((path) =>
          request(f.server)
            .post(path)
            .type('form')
            .send('List-Unsubscribe=One-Click')
            .then((res) => res.status),
        ),
      );
      for (const status of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).to.deep.equal({ 200: PEOPLE });
    const [{ n }] = await f.engine
      .knex('subscribers')
      .where({ organization_id: org, status: 'unsubscribed' })
      .count({ n: '*' });
    expect(Number(n)).to.equal(PEOPLE);
    expect((await f.api().get(`/messages/${message}`).expect(200)).body.data.stats.unsubscribed).to.equal(PEOPLE);

    // A link that is not valid counts: the 101st of the hour is refused.
    const bad = paths[0].replace(/token=\d+/, 'token=999999');
    const refused: number[] = [];
    for (let i = 0; i < 101; i++) refused.push((await request(f.server).post(bad)).status);
    expect(refused.slice(0, 100).every((s) => s === 404)).to.equal(true);
    expect(refused[100]).to.equal(429);
    // A valid one still goes through.
    await request(f.server).post(paths[1]).expect(200);
  });
});
