import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../../shared/tests/support';

describeEachBackend('campaign: listing and searching subscribers', (backend) => {
  let f: CampaignFixture;
  const ids: Record<string, number> = {};
  before(async () => {
    f = await campaignFixture(backend());
    const vip = (await f.api().post('/lists', { name: 'VIP', code: 'vip' }).expect(201)).body.data.id;
    const people = [
      {
        email: 'ada@example.com',
        first_name: 'Ada',
        last_name: 'Lovelace',
        lists: [vip],
        meta_data: { plan: 'pro', tags: ['math'] },
      },
      {
        email: 'grace@example.com',
        first_name: 'Grace',
        last_name: 'Hopper',
        meta_data: { plan: 'free', tags: ['navy', 'math'] },
      },
      { email: 'alan@example.org', first_name: 'Alan', last_name: 'Turing', lists: [vip], meta_data: { plan: 'pro' } },
      { email: 'edsger@example.org', first_name: 'Edsger', last_name: 'Dijkstra', lists: [vip], confirmed: false },
    ];
    for (const p of people) ids[p.first_name] = (await f.api().post('/subscribers', p).expect(201)).body.data.id;
    await f.api().post(`/subscribers/${ids.Alan}/unsubscribe`).expect(200);
    // Older than the others, for created:>.
    await f.engine
      .knex('subscribers')
      .where({ id: ids.Grace })
      .update({ created_at: new Date('2020-06-01T12:00:00Z') });
  });
  after(() => f.close());

  const names = async (query: string) => {
    const res = await f.api().get(`/subscribers?${query}`).expect(200);
    return res.body.data.map((s: { first_name: string }) => s.first_name);
  };
  const search = (text: string, extra = '') => names(`search=${encodeURIComponent(text)}${extra}`);

  it('lists active subscribers by default, with list ids and meta_data', async () => {
    const res = await f.api().get('/subscribers').expect(200);
    expect(res.body.data.map((s: { first_name: string }) => s.first_name)).to.deep.equal(['Ada', 'Grace']);
    expect(res.body.data[0]).to.have.keys(
      'id',
      'email',
      'first_name',
      'last_name',
      'company_name',
      'phone',
      'job_title',
      'status',
      'lists',
      'created_at',
      'meta_data',
    );
    expect(res.body.data[0].lists).to.be.an('array').with.length(1);
    expect(res.body.data[0].lists[0]).to.be.a('number');
  });

  it('filters by status and list_id', async () => {
    expect(await names('status=unsubscribed')).to.deep.equal(['Alan']);
    expect(await names('status=unconfirmed')).to.deep.equal(['Edsger']);
    const vip = (await f.api().get('/lists')).body.data[0].id;
    expect(await names(`list_id=${vip}`)).to.deep.equal(['Ada']);
    expect(await names(`list_id=${vip}&status=unconfirmed`)).to.deep.equal(['Edsger']);
    const bad = await f.api().get('/subscribers?status=sleeping').expect(422);
    expect(bad.body.error.details).to.deep.equal({ field: 'status', rule: 'enum' });
  });

  it('supports every search operator', async () => {
    expect(await search('email:ADA@example.COM')).to.deep.equal([]);
    expect(await search('email:ada@EXAMPLE.com')).to.deep.equal(['Ada']);
    expect(await search('name:hopper')).to.deep.equal(['Grace']);
    expect(await search('name:hop')).to.deep.equal(['Grace']);
    expect(await search('name:hop*')).to.deep.equal(['Grace']);
    expect(await search('name:"ada lovelace"')).to.deep.equal(['Ada']);
    expect(await search('name:"ada love*"')).to.deep.equal(['Ada']);
    expect(await search('name:"ada hopper"')).to.deep.equal([]);
    expect(await search('list:vip')).to.deep.equal(['Ada']);
    expect(await search('list:nosuchlist')).to.deep.equal([]);
    expect(await search('status:unsubscribed')).to.deep.equal(['Alan']);
    expect(await search('created:>2021-01-01')).to.deep.equal(['Ada']);
    // After the last day a date has: no one (year 10000 matched everyone created since 2021 on MariaDB).
    expect(await search('created:>9999-12-31')).to.deep.equal([]);
    expect(await search('meta.plan:pro')).to.deep.equal(['Ada']);
    expect(await search('meta.tags:math')).to.deep.equal(['Ada', 'Grace']);
    expect(await search('example.com')).to.deep.equal(['Ada', 'Grace']);
    expect(await search('grace')).to.deep.equal(['Grace']);
    expect(await search('GRACE example.com')).to.deep.equal(['Grace']);
    expect(await search('lovelace')).to.deep.equal(['Ada']);
  });

  it('matches a plain email address as the whole address, and a quoted phrase by its words', async () => {
    expect(await search('ada@EXAMPLE.com')).to.deep.equal(['Ada']);
    expect(await search(' grace@example.com ')).to.deep.equal(['Grace']);
    expect(await search('ada@example.com grace@example.com')).to.deep.equal([]);
    expect(await search('ada@example.com lovelace')).to.deep.equal(['Ada']);
    expect(await search('da@example.com')).to.deep.equal([]);
    expect(await search('alan@example.org', '&status=unsubscribed')).to.deep.equal(['Alan']);
    expect(await search('"ada lovelace"')).to.deep.equal(['Ada']);
    expect(await search('"Grace  example.com"')).to.deep.equal(['Grace']);
    expect(await search('"ada hopper"')).to.deep.equal([]);
  });

  it('combines operators separated by spaces', async () => {
    expect(await search('list:vip status:unconfirmed')).to.deep.equal(['Edsger']);
    expect(await search('list:vip status:unsubscribed meta.plan:pro')).to.deep.equal(['Alan']);
    expect(await search('meta.tags:math name:grace')).to.deep.equal(['Grace']);
    // The status copies in the search indexes follow an unsubscribe.
    expect(await search('alan')).to.deep.equal([]);
    expect(await search('alan status:unsubscribed')).to.deep.equal(['Alan']);
    expect(await search('meta.plan:pro status:unsubscribed')).to.deep.equal(['Alan']);
  });

  it('answers a malformed search with VALIDATION_ERROR naming the operator, never a 500', async () => {
    for (const text of ['created:>soon', 'status:asleep', 'weird:op', 'name:"open', 'meta.:x']) {
      const res = await f
        .api()
        .get(`/subscribers?search=${encodeURIComponent(text)}`)
        .expect(422);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.details.field).to.equal('search');
    }
  });

  it('takes email: of anything as an exact address (ada finds nobody), and a repeated term once', async () => {
    const nobody = await f
      .api()
      .get(`/subscribers?search=${encodeURIComponent('email:ada')}`)
      .expect(200);
    expect(nobody.body.data).to.deep.equal([]);
    expect(nobody.body.pagination.total).to.equal(0);
    expect(await search('email:ada@example.com email:ada@example.com')).to.deep.equal(['Ada']);
    const many = await f
      .api()
      .get(`/subscribers?search=${encodeURIComponent(Array.from({ length: 17 }, (_, i) => `w${i}`).join(' '))}`)
      .expect(422);
    expect(many.body.error.details).to.deep.equal({ field: 'search', rule: 'max_terms' });
  });

  it('paginates with total, last page and neighbour urls', async () => {
    for (let i = 0; i < 5; i++)
      await f
        .api()
        .post('/subscribers', { email: `page${i}@example.net` })
        .expect(201);
    const res = await f.api().get('/subscribers?per_page=3&page=2&search=example.net').expect(200);
    expect(res.body.pagination).to.include({
      total: 5,
      per_page: 3,
      current_page: 2,
      last_page: 2,
      next_page_url: null,
    });
    expect(res.body.pagination.prev_page_url).to.match(
      /\/api\/campaign\/subscribers\?per_page=3&page=1&search=example.net$/,
    );
    expect(res.body.data).to.have.length(2);
    const first = await f.api().get('/subscribers?per_page=3').expect(200);
    expect(first.body.pagination.next_page_url).to.match(/page=2/);
    await f.api().get('/subscribers?per_page=101').expect(422);
  });
});
