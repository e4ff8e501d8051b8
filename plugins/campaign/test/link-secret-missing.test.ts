import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../src/shared/tests/support';

/**
 * A process of this version on a database not migrated to campaign 1.13 finds no sealed link secret: a link
 * it is asked to verify answers 503 saying to run migrate (it was a 500 from a TypeError; session 27).
 */
describeEachBackend('campaign: links before the link secret is sealed', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend());
  });
  after(() => f?.close());

  it('answers an unsubscribe link 503, saying to run migrate', async () => {
    await f.engine.knex('campaign_settings').where({ name: 'sealed_link_signing_secret' }).delete();
    const res = await request(f.server).post('/api/campaign/unsubscribe?token=1.1.1.abcdef');
    expect(res.status).to.equal(503);
    expect(JSON.stringify(res.body ?? res.text)).to.contain('run migrate');
  });
});
