import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from './support';

const AUDIENCE = 20_000;
const WORST = 'u* e* x* a* g* 1* 2* 3* 4* 5* 6* 7* 8* 9* 0* y*';
/** Substrings in every subscriber, and a filter none passes: the whole substring index is walked. */
const WORST_SUBSTRING = 'u e r x a 1 ex. .com ser name:a meta.missing:x';

describeEachBackend('campaign: every search costs bounded work', (backend) => {
  let f: CampaignFixture;
  before(async function () {
    this.timeout(120_000);
    f = await campaignFixture(backend());
    for (let start = 0; start < AUDIENCE; start += 1000) {
      const subscribers = Array.from({ length: 1000 }, (_, i) => ({
        email: `user${start + i}@ex${(start + i) % 97}.com`,
        first_name: ['ada', 'xena', 'xavier', 'grace'][(start + i) % 4],
        last_name: `x${(start + i) % 50}y`,
      }));
      await f.api().post('/subscribers/batch', { subscribers, skip_confirmation: true }).expect(200);
    }
  });
  after(() => f.close());

  const search = (text: string) => f.api().get(`/subscribers?search=${encodeURIComponent(text)}`);

  it('answers a prefix within the bound exactly, a repeated one once, and refuses prefixes too common', async () => {
    // Every fourth subscriber is a Xavier.
    for (const text of ['xa*', 'xa* xa* xa* xa*']) {
      const res = await search(text).expect(200);
      expect(res.body.pagination.total, text).to.equal(AUDIENCE / 4);
      expect(res.body.data.every((s: { first_name: string }) => s.first_name === 'xavier')).to.equal(true);
    }
    for (const text of ['x* u*', 'a* e* u* x*', WORST]) {
      const res = await search(text).expect(422);
      expect(res.body.error.details, text).to.deep.equal({ field: 'search', rule: 'too_common' });
      expect(res.body.error.message).to.contain('type more of the word');
    }
  });

  it('keeps /health answering within a second while the worst search runs', async () => {
    const started = Date.now();
    const searching = search(WORST).then((res) => ({ status: res.status, ms: Date.now() - started }));
    const health = await request(f.server).get('/health').expect(200);
    const healthMs = Date.now() - started;
    const done = await searching;
    expect(health.body.status).to.equal('ok');
    expect(healthMs).to.be.below(1000);
    expect(done.status).to.equal(422);
  });

  it('keeps /health answering within a second while a substring search walks the whole index', async () => {
    const started = Date.now();
    const searching = search(WORST_SUBSTRING);
    const health = await request(f.server).get('/health').expect(200);
    expect(Date.now() - started).to.be.below(1000);
    expect(health.body.status).to.equal('ok');
    const done = await searching.expect(200);
    expect(done.body.data).to.deep.equal([]);
    expect(done.body.pagination.total).to.equal(0);
  });
});
