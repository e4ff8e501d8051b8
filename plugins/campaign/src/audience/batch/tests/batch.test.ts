import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../../shared/tests/support';

describeEachBackend('campaign: batch operations', (backend) => {
  let f: CampaignFixture;
  let list: number;
  before(async () => {
    f = await campaignFixture(backend());
    list = (await f.api().post('/lists', { name: 'Import', code: 'import' }).expect(201)).body.data.id;
  });
  after(() => f.close());

  it('answers only its own methods: GET is a 405 naming them, not a subscriber called "batch"', async () => {
    const path = '/api/campaign/subscribers/batch';
    const get = await request(f.server).get(path).set(f.tenant.auth).expect(405);
    expect(get.body.error.code).to.equal('METHOD_NOT_ALLOWED');
    expect(get.headers.allow).to.equal('POST, PUT, DELETE');
    const options = await request(f.server).options(path).set(f.tenant.auth).expect(200);
    expect(options.headers.allow).to.equal('POST, PUT, DELETE');
    await request(f.server).get('/api/campaign/subscribers/999999').set(f.tenant.auth).expect(404);
  });

  /** The subscriber a search for this exact address finds, as a list shows it. */
  const byEmail = async (email: string) =>
    (
      await f
        .api()
        .get(`/subscribers?search=${encodeURIComponent(`email:${email}`)}`)
        .expect(200)
    ).body.data[0];
  const newList = async (code: string): Promise<number> =>
    (await f.api().post('/lists', { name: code, code }).expect(201)).body.data.id;
  const listCounts = async (id: number) => (await f.api().get(`/lists/${id}`).expect(200)).body.data;
  const foundIds = async (search: string): Promise<number[]> =>
    (
      await f
        .api()
        .get(`/subscribers?search=${encodeURIComponent(search)}`)
        .expect(200)
    ).body.data.map((s: { id: number }) => s.id);

  it('creates and updates by email, reporting each bad row with its index, field and rule', async () => {
    await f.api().post('/subscribers', { email: 'known@example.com', first_name: 'Old' }).expect(201);
    const res = await f
      .api()
      .post('/subscribers/batch', {
        lists: [list],
        skip_confirmation: true,
        subscribers: [
          { email: 'new1@example.com', first_name: 'New', last_name: 'One', meta_data: { plan: 'pro' } },
          { email: 'known@EXAMPLE.COM', first_name: 'Updated' },
          { first_name: 'No email' },
          { email: 'not-an-email' },
          { email: 'new1@example.com' },
          { email: 'new2@example.com', lists: [999999] },
          { email: ' new3@Example.com ' },
        ],
      })
      .expect(200);
    expect(res.body.data).to.deep.include({ created: 2, updated: 1, failed: 4 });
    expect(
      res.body.data.errors.map((e: { index: number; field: string; rule: string }) => [e.index, e.field, e.rule]),
    ).to.deep.equal([
      [2, 'email', 'required'],
      [3, 'email', 'format'],
      [4, 'email', 'duplicate_in_batch'],
      [5, 'lists', 'exists'],
    ]);
    const known = await f
      .api()
      .get(`/subscribers?search=${encodeURIComponent('email:known@example.com')}`)
      .expect(200);
    expect(known.body.data[0]).to.include({ first_name: 'Updated' });
    expect(known.body.data[0].lists).to.deep.equal([list]);
    const fresh = await f
      .api()
      .get(`/subscribers?search=${encodeURIComponent('meta.plan:pro list:import')}`)
      .expect(200);
    expect(fresh.body.data.map((s: { email: string }) => s.email)).to.deep.equal(['new1@example.com']);
    expect(fresh.body.data[0].status).to.equal('active');
    const stored = (await f.api().get(`/lists/${list}`).expect(200)).body.data;
    expect(stored).to.include({ subscriber_count: 3, active_count: 3 });
  });

  it('finds a known email at the end of a batch of new ones: nothing of the first attempt stays', async () => {
    const mixed = (await f.api().post('/lists', { name: 'Mixed', code: 'mixed' }).expect(201)).body.data.id;
    const known = (
      await f
        .api()
        .post('/subscribers', { email: 'late@example.org', first_name: 'Late', lists: [mixed] })
        .expect(201)
    ).body.data.id;
    const totalBefore = (await f.api().get('/subscribers?per_page=1').expect(200)).body.pagination.total;
    const rows = Array.from({ length: 300 }, (_, i) => ({
      email: `early${i}@example.org`,
      first_name: 'Early',
      meta_data: { wave: 'one' },
    }));
    const res = await f
      .api()
      .post('/subscribers/batch', {
        lists: [mixed],
        skip_confirmation: true,
        subscribers: [...rows, { email: 'late@example.org', first_name: 'Later' }],
      })
      .expect(200);
    expect(res.body.data).to.deep.include({ created: 300, updated: 1, failed: 0 });

    expect((await f.api().get(`/subscribers/${known}`).expect(200)).body.data).to.include({ first_name: 'Later' });
    expect((await f.api().get('/subscribers?per_page=1').expect(200)).body.pagination.total).to.equal(
      totalBefore + 300,
    );
    expect(await listCounts(mixed)).to.include({
      subscriber_count: 301,
      active_count: 301,
    });
    const [{ members }] = await f.engine.knex('list_subscribers').where({ list_id: mixed }).count({ members: '*' });
    expect(Number(members)).to.equal(301);
    const early = await f
      .api()
      .get(`/subscribers?per_page=1&search=${encodeURIComponent('name:early*')}`)
      .expect(200);
    expect(early.body.pagination.total).to.equal(300);
    const waves = await f
      .api()
      .get(`/subscribers?per_page=100&search=${encodeURIComponent('meta.wave:one')}`)
      .expect(200);
    expect(waves.body.pagination.total).to.equal(300);
  });

  it('updates known subscribers giving different fields in one request, each only in the fields it gives', async () => {
    const first = {
      email: 'keep1@example.org',
      first_name: 'Ann',
      last_name: 'Old',
      company_name: 'Acme',
      meta_data: { plan: 'free' },
    };
    const second = { email: 'keep2@example.org', first_name: 'Bob', last_name: 'Old', phone: '+1 555' };
    await f
      .api()
      .post('/subscribers/batch', { skip_confirmation: true, subscribers: [first, second] })
      .expect(200);
    const before = await byEmail('keep1@example.org');
    const res = await f
      .api()
      .post('/subscribers/batch', {
        skip_confirmation: true,
        subscribers: [
          { email: 'keep1@example.org', last_name: 'Renewed' },
          { email: 'keep2@EXAMPLE.org', meta_data: { plan: 'pro' }, phone: '+1 556' },
        ],
      })
      .expect(200);
    expect(res.body.data).to.deep.include({ created: 0, updated: 2, failed: 0 });
    const one = await byEmail('keep1@example.org');
    expect(one).to.deep.include({
      id: before.id,
      first_name: 'Ann',
      last_name: 'Renewed',
      company_name: 'Acme',
      meta_data: { plan: 'free' },
      created_at: before.created_at,
    });
    expect(await byEmail('keep2@example.org')).to.deep.include({
      first_name: 'Bob',
      last_name: 'Old',
      phone: '+1 556',
      meta_data: { plan: 'pro' },
    });
    const detail = (await f.api().get(`/subscribers/${before.id}`).expect(200)).body.data;
    expect(Date.parse(detail.updated_at)).to.be.at.least(Date.parse(before.created_at));
    expect(
      await f
        .api()
        .get(`/subscribers?search=${encodeURIComponent('name:renewed')}`)
        .expect(200)
        .then((r) => r.body.data.map((s: { id: number }) => s.id)),
    ).to.deep.equal([before.id]);
  });

  it('stores the profile fields of each row when rows of one request give different ones', async () => {
    await f
      .api()
      .post('/subscribers/batch', {
        skip_confirmation: true,
        subscribers: [
          { email: 'plain@example.com' },
          { email: 'full@example.com', company_name: 'Acme', phone: '+31 20 123', meta_data: { plan: 'team' } },
          { email: 'named@example.com', first_name: 'Zoe' },
        ],
      })
      .expect(200);
    expect(await byEmail('plain@example.com')).to.deep.include({
      first_name: null,
      company_name: null,
      phone: null,
      job_title: null,
      meta_data: {},
    });
    expect(await byEmail('full@example.com')).to.deep.include({
      first_name: null,
      company_name: 'Acme',
      phone: '+31 20 123',
      meta_data: { plan: 'team' },
    });
    expect(await byEmail('named@example.com')).to.deep.include({
      first_name: 'Zoe',
      company_name: null,
      phone: null,
      meta_data: {},
    });
  });

  it('makes new subscribers unconfirmed unless skip_confirmation, and queues their mails', async () => {
    const res = await f
      .api()
      .post('/subscribers/batch', { subscribers: [{ email: 'pending@example.com' }] })
      .expect(200);
    expect(res.body.data.created).to.equal(1);
    const unconfirmed = await f.api().get('/subscribers?status=unconfirmed').expect(200);
    expect(unconfirmed.body.data.map((s: { email: string }) => s.email)).to.include('pending@example.com');
    const counts = await f.engine.container
      .resolve<import('@switchboard/core').JobQueues>('Queues')
      .get('campaign.confirmation-mail')
      .counts();
    expect(counts.waiting + counts.active).to.be.at.least(1);
  });

  it('refuses more than 1000 rows with VALIDATION_ERROR', async () => {
    const rows = Array.from({ length: 1001 }, (_, i) => ({ email: `r${i}@example.com` }));
    const res = await f.api().post('/subscribers/batch', { subscribers: rows }).expect(422);
    expect(res.body.error.details).to.deep.equal({ field: 'subscribers', rule: 'maxItems' });
  });

  it('imports 1000 rows in one request with the counters right', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({
      email: `bulk${i}@example.org`,
      first_name: `Bulk${i}`,
      meta_data: { cohort: String(i % 3) },
    }));
    const res = await f
      .api()
      .post('/subscribers/batch', { subscribers: rows, lists: [list], skip_confirmation: true })
      .expect(200);
    expect(res.body.data).to.deep.include({ created: 1000, updated: 0, failed: 0 });
    expect((await f.api().get(`/lists/${list}`)).body.data.active_count).to.equal(1003);
    const cohort = await f
      .api()
      .get(`/subscribers?per_page=1&search=${encodeURIComponent('meta.cohort:1')}`)
      .expect(200);
    expect(cohort.body.pagination.total).to.equal(333);
  });

  it('updates many by id or email', async () => {
    const a = (await f.api().post('/subscribers', { email: 'upd-a@example.com' }).expect(201)).body.data.id;
    await f.api().post('/subscribers', { email: 'upd-b@example.com' }).expect(201);
    const res = await f
      .api()
      .put('/subscribers/batch', {
        subscribers: [
          { id: a, job_title: 'CTO' },
          { email: 'upd-b@EXAMPLE.com', job_title: 'CEO' },
          { email: 'missing@example.com', job_title: 'x' },
          { job_title: 'no key' },
          // Only members the update does not know (a customer's status column): it changes nothing, and says so.
          { id: a, status: 'unsubscribed' },
        ],
      })
      .expect(200);
    expect(res.body.data).to.deep.include({ updated: 2, failed: 3 });
    expect(res.body.data.errors.map((e: { index: number; rule: string }) => [e.index, e.rule])).to.deep.equal([
      [2, 'exists'],
      [3, 'required'],
      [4, 'minProperties'],
    ]);
    expect((await f.api().get(`/subscribers/${a}`)).body.data.job_title).to.equal('CTO');
  });

  it('updates many in one request: lists replaced with their counters, each failing row on its own', async () => {
    // One after the other: their ids then follow the order of the codes (the test expects gold < silver).
    const gold = await newList('gold-upd');
    const silver = await newList('silver-upd');
    const emails = ['m1@upd.example', 'm2@upd.example', 'm3@upd.example', 'm4@upd.example'];
    await f
      .api()
      .post('/subscribers/batch', {
        skip_confirmation: true,
        lists: [gold],
        subscribers: emails.map((email) => ({ email, first_name: 'Member' })),
      })
      .expect(200);
    const ids: number[] = (
      await f
        .api()
        .get(`/subscribers?search=${encodeURIComponent('name:member')}`)
        .expect(200)
    ).body.data.map((s: { id: number }) => s.id);
    await f.api().post(`/subscribers/${ids[2]}/unsubscribe`, {}).expect(200);

    const res = await f
      .api()
      .put('/subscribers/batch', {
        subscribers: [
          { id: ids[0], lists: [silver], first_name: 'Moved' },
          { email: 'm2@UPD.example', lists: [gold, silver] },
          { id: ids[2], lists: [] },
          { id: ids[0], first_name: 'Twice' },
          { id: ids[3], lists: [987654] },
          { id: 987654, job_title: 'nobody' },
        ],
      })
      .expect(200);
    expect(res.body.data).to.deep.include({ updated: 3, failed: 3 });
    expect(
      res.body.data.errors.map((e: { index: number; field: string; rule: string }) => [e.index, e.field, e.rule]),
    ).to.deep.equal([
      [3, 'id', 'duplicate_in_batch'],
      [4, 'lists', 'exists'],
      [5, 'id', 'exists'],
    ]);
    const listsOf = async (id: number) =>
      (await f.api().get(`/subscribers/${id}`).expect(200)).body.data.lists.map((l: { id: number }) => l.id);
    expect(await listsOf(ids[0])).to.deep.equal([silver]);
    expect(await listsOf(ids[1])).to.deep.equal([gold, silver]);
    expect(await listsOf(ids[2])).to.deep.equal([]);
    expect((await f.api().get(`/subscribers/${ids[0]}`).expect(200)).body.data.first_name).to.equal('Moved');
    expect(await listsOf(ids[3])).to.deep.equal([gold]);
    expect(await listCounts(gold)).to.include({
      subscriber_count: 2,
      active_count: 2,
    });
    expect(await listCounts(silver)).to.include({
      subscriber_count: 2,
      active_count: 2,
    });
    expect(await foundIds('name:moved list:silver-upd')).to.deep.equal([ids[0]]);
  });

  it('deletes many by ids and emails, counting what was not found', async () => {
    const a = (
      await f
        .api()
        .post('/subscribers', { email: 'del-a@example.com', lists: [list] })
        .expect(201)
    ).body.data.id;
    await f.api().post('/subscribers', { email: 'del-b@example.com' }).expect(201);
    const before = (await f.api().get(`/lists/${list}`)).body.data.subscriber_count;
    const res = await f
      .api()
      .delete('/subscribers/batch', { ids: [a, 987654], emails: ['del-b@EXAMPLE.com'] })
      .expect(200);
    expect(res.body.data).to.deep.equal({ deleted: 2, not_found: 1 });
    expect((await f.api().get(`/lists/${list}`)).body.data.subscriber_count).to.equal(before - 1);
    // A subscriber named by its id and its email, or twice, is found once; what is missing counts once.
    const c = (await f.api().post('/subscribers', { email: 'del-c@example.com' }).expect(201)).body.data.id;
    const twice = await f
      .api()
      .delete('/subscribers/batch', { ids: [c, c, 987654, 987654], emails: ['del-c@example.com', 'none@example.com'] })
      .expect(200);
    expect(twice.body.data).to.deep.equal({ deleted: 1, not_found: 2 });
    await f.api().delete('/subscribers/batch', {}).expect(422);
  });

  it('deletes many subscribers of different statuses and lists with every counter and search row following', async () => {
    const red = await newList('red-del');
    const blue = await newList('blue-del');
    const rows = Array.from({ length: 6 }, (_, i) => ({
      email: `gone${i}@example.net`,
      first_name: 'Gone',
      lists: i % 2 ? [red] : [red, blue],
      meta_data: { fate: 'gone' },
    }));
    await f.api().post('/subscribers/batch', { skip_confirmation: true, subscribers: rows }).expect(200);
    const ids: number[] = (
      await f
        .api()
        .get(`/subscribers?search=${encodeURIComponent('meta.fate:gone')}`)
        .expect(200)
    ).body.data.map((s: { id: number }) => s.id);
    await f.api().post(`/subscribers/${ids[0]}/unsubscribe`, {}).expect(200);
    const keep = (
      await f
        .api()
        .post('/subscribers', { email: 'stays@example.net', first_name: 'Gone', lists: [red, blue] })
        .expect(201)
    ).body.data.id;
    const totals = async () => ({
      active: (await f.api().get('/subscribers?per_page=1').expect(200)).body.pagination.total,
      unsubscribed: (await f.api().get('/subscribers?per_page=1&status=unsubscribed').expect(200)).body.pagination
        .total,
    });
    const before = await totals();

    const res = await f
      .api()
      .delete('/subscribers/batch', { ids: ids.slice(0, 4), emails: ['gone4@example.net', 'gone5@EXAMPLE.net'] })
      .expect(200);
    expect(res.body.data).to.deep.equal({ deleted: 6, not_found: 0 });
    expect(await totals()).to.deep.equal({ active: before.active - 5, unsubscribed: before.unsubscribed - 1 });
    expect(await listCounts(red)).to.include({
      subscriber_count: 1,
      active_count: 1,
    });
    expect(await listCounts(blue)).to.include({
      subscriber_count: 1,
      active_count: 1,
    });
    expect(await foundIds('name:gone')).to.deep.equal([keep]);
    const [{ left }] = await f.engine
      .knex('subscriber_meta')
      .where({ organization_id: f.tenant.organizationId, meta_key: 'fate' })
      .count({ left: '*' });
    expect(Number(left)).to.equal(0);
    const [{ members }] = await f.engine.knex('list_subscribers').whereIn('subscriber_id', ids).count({ members: '*' });
    expect(Number(members)).to.equal(0);
  });

  it('keeps counters exact when imports with overlapping rows run at the same time', async () => {
    const shared = (await f.api().post('/lists', { name: 'Shared', code: 'shared' }).expect(201)).body.data.id;
    const request = (from: number) =>
      f.api().post('/subscribers/batch', {
        lists: [shared],
        skip_confirmation: true,
        subscribers: Array.from({ length: 300 }, (_, i) => ({
          email: `par${from + i}@example.net`,
          meta_data: { batch: String(from) },
        })),
      });
    // Four requests, each overlapping half of the next one's emails.
    const results = await Promise.all([0, 150, 300, 450].map((from) => request(from)));
    for (const res of results) expect(res.status).to.equal(200);
    const created = results.reduce((n, r) => n + r.body.data.created, 0);
    const updated = results.reduce((n, r) => n + r.body.data.updated, 0);
    expect(created).to.equal(750);
    expect(created + updated).to.equal(1200);
    const list = (await f.api().get(`/lists/${shared}`)).body.data;
    const [{ n }] = await f.engine.knex('list_subscribers').where({ list_id: shared }).count({ n: '*' });
    expect(list.subscriber_count).to.equal(750);
    expect(Number(n)).to.equal(750);
    const [{ active }] = await f.engine
      .knex('subscribers')
      .where({ organization_id: f.tenant.organizationId, status: 'active' })
      .count({ active: '*' });
    expect((await f.api().get('/subscribers?per_page=1')).body.pagination.total).to.equal(Number(active));
  });
});
