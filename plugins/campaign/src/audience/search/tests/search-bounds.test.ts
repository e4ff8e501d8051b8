import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../../shared/tests/support';

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

  it('answers prefixes exactly, a repeated one once, common ones with the capped total', async () => {
    // Every fourth subscriber is a Xavier, every fiftieth an X8y; every last name starts with x, every
    // address with user and ex.
    for (const text of ['xav* x8y*', 'xav* xav* x8y* xav* x8y*', 'name:xav* x8y*', 'u* xav* e* x8y*']) {
      const res = await search(text).expect(200);
      expect(res.body.pagination, text).to.include({ total: AUDIENCE / 100 });
      expect(res.body.data.every((s: { first_name: string }) => s.first_name === 'xavier')).to.equal(true);
    }
    for (const text of ['x* u*', 'a* e* u* x*']) {
      const res = await search(text).expect(200);
      expect(res.body.pagination, text).to.include({ total: 1000, total_capped: true });
    }
    // Digits are in every address, but no word starts with one.
    const none = await search(WORST).expect(200);
    expect(none.body.pagination.total).to.equal(0);
    expect(none.body.data).to.deep.equal([]);
  });

  it('reads at most its read budget of the index: a page with no match found by then is a 422 too_broad', async () => {
    // Another engine on the same database, its budget (plugins.campaign.options.search) spent by the first
    // window's rows (4 blocks of 4096 ids): user19000 to user19999 lie past it.
    const tight = await campaignFixture(backend(), {}, undefined, {
      plugins: [
        { id: 'campaign', package: '@switchboard/plugin-campaign', options: { search: { readBudgetBytes: 1 } } },
      ],
    });
    try {
      const searchTight = (text: string, page = 1) =>
        tight.api(f.tenant).get(`/subscribers?search=${encodeURIComponent(text)}&page=${page}`);
      // user19, user190 to user199 and user1900 to user1999 are in the first window.
      const found = await searchTight('user19').expect(200);
      expect(found.body.pagination).to.include({ total: 111, total_capped: true });
      const last = await searchTight('user19', 6).expect(200);
      expect(last.body.data.map((s: { email: string }) => s.email.split('@')[0])).to.deep.equal(
        Array.from({ length: 11 }, (_, i) => `user${1989 + i}`),
      );
      for (const [text, page] of [
        ['user19', 7],
        ['user19999', 1],
      ] as const) {
        const res = await searchTight(text, page).expect(422);
        expect(res.body.error.details, text).to.deep.equal({ field: 'search', rule: 'too_broad' });
        expect(res.body.error.message).to.include(`held no match for page ${page}.`);
      }
    } finally {
      await tight.close();
    }
    // The default budget (4 MiB) reads the whole index of these 20,000.
    expect((await search('user19999').expect(200)).body.pagination).to.include({ total: 1 });
    expect((await search('user19').expect(200)).body.pagination).to.include({ total: 1000, total_capped: true });
  });

  it('keeps /health answering within a second while the worst search runs', async () => {
    const started = Date.now();
    const searching = search(WORST).then((res) => ({ status: res.status, ms: Date.now() - started }));
    const health = await request(f.server).get('/health').expect(200);
    const healthMs = Date.now() - started;
    const done = await searching;
    expect(health.body.status).to.equal('ok');
    expect(healthMs).to.be.below(1000);
    expect(done.status).to.equal(200);
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
