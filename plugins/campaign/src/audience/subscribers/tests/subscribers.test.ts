import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend, createTenant } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../../shared/tests/support';
import { SubscriberWriter } from '../writer';

describeEachBackend('campaign: subscribers', (backend) => {
  let f: CampaignFixture;
  let vip: number;
  let news: number;
  before(async () => {
    f = await campaignFixture(backend());
    vip = (await f.api().post('/lists', { name: 'VIP', code: 'vip' }).expect(201)).body.data.id;
    news = (await f.api().post('/lists', { name: 'News', code: 'news' }).expect(201)).body.data.id;
  });
  after(() => f.close());

  it('creates a subscriber (email normalized, lists, meta_data) and reads it with lists as objects', async () => {
    const res = await f
      .api()
      .post('/subscribers', {
        email: '  Ada.Lovelace@EXAMPLE.com ',
        first_name: 'Ada',
        last_name: 'Lovelace',
        lists: [vip, news],
        meta_data: { plan: 'pro', tags: ['math', 'poetry'] },
      })
      .expect(201);
    expect(res.body.data).to.deep.include({
      email: 'Ada.Lovelace@example.com',
      status: 'active',
      confirmation_sent: false,
    });
    const read = await f.api().get(`/subscribers/${res.body.data.id}`).expect(200);
    expect(read.body.data).to.deep.include({
      email: 'Ada.Lovelace@example.com',
      first_name: 'Ada',
      status: 'active',
      unsubscribed_at: null,
      messages_received: 0,
      messages_opened: 0,
      messages_clicked: 0,
      meta_data: { plan: 'pro', tags: ['math', 'poetry'] },
    });
    expect(read.body.data.confirmed_at).to.be.a('string');
    expect(read.body.data.lists).to.deep.equal([
      { id: vip, name: 'VIP', code: 'vip' },
      { id: news, name: 'News', code: 'news' },
    ]);
    expect(read.body.meta.version).to.be.a('string');
  });

  it('names the missing email with rule required, and refuses an invalid one', async () => {
    const missing = await f.api().post('/subscribers', { first_name: 'X' }).expect(422);
    expect(missing.body.error).to.deep.include({
      code: 'VALIDATION_ERROR',
      details: { field: 'email', rule: 'required' },
    });
    const invalid = await f.api().post('/subscribers', { email: 'not-an-email' }).expect(422);
    expect(invalid.body.error.details).to.deep.equal({ field: 'email', rule: 'format' });
    const meta = await f
      .api()
      .post('/subscribers', { email: 'm@example.com', meta_data: { n: 5 } })
      .expect(422);
    expect(meta.body.error.details.field).to.match(/^meta_data/);
    const list = await f
      .api()
      .post('/subscribers', { email: 'l@example.com', lists: [999999] })
      .expect(422);
    expect(list.body.error.details).to.deep.equal({ field: 'lists', rule: 'exists' });
  });

  it('refuses a duplicate email in the organization after normalization, not in another one', async () => {
    await f.api().post('/subscribers', { email: 'dup@example.com' }).expect(201);
    const dup = await f.api().post('/subscribers', { email: 'dup@EXAMPLE.COM' }).expect(409);
    expect(dup.body.error).to.deep.include({ code: 'DUPLICATE_ENTRY', details: { field: 'email', rule: 'unique' } });
    const other = await createTenant(f.engine, { name: 'Other' });
    await f.api(other).post('/subscribers', { email: 'dup@example.com' }).expect(201);
  });

  it('updates fields, replaces lists and meta_data, and keeps list counts right', async () => {
    const id = (
      await f
        .api()
        .post('/subscribers', { email: 'move@example.com', lists: [vip], meta_data: { plan: 'free' } })
        .expect(201)
    ).body.data.id;
    const before = (await f.api().get(`/lists/${news}`).expect(200)).body.data;
    const res = await f
      .api()
      .put(`/subscribers/${id}`, { first_name: 'Mo', lists: [news], meta_data: { plan: 'pro' } })
      .expect(200);
    expect(res.body.data.first_name).to.equal('Mo');
    expect(res.body.data.lists.map((l: { id: number }) => l.id)).to.deep.equal([news]);
    expect(res.body.data.meta_data).to.deep.equal({ plan: 'pro' });
    const after = (await f.api().get(`/lists/${news}`).expect(200)).body.data;
    expect(after.subscriber_count).to.equal(before.subscriber_count + 1);
    expect(after.active_count).to.equal(before.active_count + 1);
    const search = await f.api().get('/subscribers?search=meta.plan:free').expect(200);
    expect(search.body.data.map((s: { id: number }) => s.id)).not.to.include(id);
  });

  it('takes meta_data up to 65,535 bytes of JSON and refuses more with a 422, alone in a batch', async () => {
    const meta = (keys: number) =>
      Object.fromEntries(Array.from({ length: keys }, (_, k) => [`k${k}`, Array(50).fill('v'.repeat(191))]));
    const fits = await f
      .api()
      .post('/subscribers', { email: 'meta-fits@example.com', meta_data: meta(6) })
      .expect(201);
    const stored = (await f.api().get(`/subscribers/${fits.body.data.id}`).expect(200)).body.data.meta_data;
    expect(stored).to.deep.equal(meta(6));
    const big = await f
      .api()
      .post('/subscribers', { email: 'meta-big@example.com', meta_data: meta(8) })
      .expect(422);
    expect(big.body.error.details).to.deep.equal({ field: 'meta_data', rule: 'maxLength' });
    const put = await f
      .api()
      .put(`/subscribers/${fits.body.data.id}`, { meta_data: meta(8) })
      .expect(422);
    expect(put.body.error.details).to.deep.equal({ field: 'meta_data', rule: 'maxLength' });
    const batch = await f
      .api()
      .post('/subscribers/batch', {
        subscribers: [
          { email: 'meta-batch-big@example.com', meta_data: meta(8) },
          { email: 'meta-batch-ok@example.com' },
        ],
      })
      .expect(200);
    expect(batch.body.data).to.deep.include({ created: 1, failed: 1 });
    expect(batch.body.data.errors[0]).to.deep.include({ index: 0, field: 'meta_data', rule: 'maxLength' });
  });

  it('refuses an update that names no known field instead of changing nothing', async () => {
    const id = (await f.api().post('/subscribers', { email: 'still@example.com', first_name: 'Stil' }).expect(201)).body
      .data.id;
    for (const body of [{}, { nmae: 'typo' }]) {
      const res = await f.api().put(`/subscribers/${id}`, body).expect(422);
      expect(res.body.error.details).to.deep.equal({ field: 'body', rule: 'minProperties' });
    }
    expect((await f.api().get(`/subscribers/${id}`).expect(200)).body.data).to.include({ first_name: 'Stil' });
  });

  it('unsubscribes with reason and feedback, and moves the counts', async () => {
    const id = (
      await f
        .api()
        .post('/subscribers', { email: 'bye@example.com', lists: [vip] })
        .expect(201)
    ).body.data.id;
    const listBefore = (await f.api().get(`/lists/${vip}`)).body.data;
    const res = await f
      .api()
      .post(`/subscribers/${id}/unsubscribe`, { reason: 'too many mails', feedback: 'weekly is enough' })
      .expect(200);
    expect(res.body.data.status).to.equal('unsubscribed');
    expect(res.body.data.unsubscribed_at).to.be.a('string');
    const row = await f.engine.knex('subscribers').where({ id }).first('unsubscribe_reason', 'unsubscribe_feedback');
    expect(row).to.deep.equal({ unsubscribe_reason: 'too many mails', unsubscribe_feedback: 'weekly is enough' });
    const listAfter = (await f.api().get(`/lists/${vip}`)).body.data;
    expect(listAfter).to.include({
      subscriber_count: listBefore.subscriber_count,
      active_count: listBefore.active_count - 1,
    });
    const unsubscribed = await f.api().get('/subscribers?status=unsubscribed').expect(200);
    expect(unsubscribed.body.data.map((s: { id: number }) => s.id)).to.include(id);
  });

  it('keeps the first unsubscribe: its reason, feedback and day, through a second one and a bounce', async () => {
    const id = (await f.api().post('/subscribers', { email: 'twice@example.com' }).expect(201)).body.data.id;
    const first = (
      await f.api().post(`/subscribers/${id}/unsubscribe`, { reason: 'too many', feedback: 'weekly' }).expect(200)
    ).body.data;
    const row = () =>
      f.engine.knex('subscribers').where({ id }).first('status', 'unsubscribe_reason', 'unsubscribe_feedback');
    // Again without a reason: the first one's stay (they were erased).
    await f.api().post(`/subscribers/${id}/unsubscribe`, {}).expect(200);
    expect(await row()).to.deep.equal({
      status: 'unsubscribed',
      unsubscribe_reason: 'too many',
      unsubscribe_feedback: 'weekly',
    });
    // Bounced, then unsubscribed again: still the first day (it was stamped anew).
    await campaignContainer(f.engine).resolve(SubscriberWriter).setStatus(f.tenant.organizationId, id, 'bounced');
    const again = (await f.api().post(`/subscribers/${id}/unsubscribe`, {}).expect(200)).body.data;
    expect(again).to.include({ status: 'unsubscribed', unsubscribed_at: first.unsubscribed_at });
  });

  it('unsubscribes without a body as fetch, browsers and curl -d "" send it (Content-Length: 0, no type)', async () => {
    const id = (await f.api().post('/subscribers', { email: 'nobody-body@example.com' }).expect(201)).body.data.id;
    const res = await request(f.server)
      .post(`/api/campaign/subscribers/${id}/unsubscribe`)
      .set(f.tenant.auth)
      .set('Content-Length', '0')
      .expect(200);
    expect(res.body.data.status).to.equal('unsubscribed');
  });

  it('deletes a subscriber and its memberships', async () => {
    const id = (
      await f
        .api()
        .post('/subscribers', { email: 'gone@example.com', lists: [vip] })
        .expect(201)
    ).body.data.id;
    const before = (await f.api().get(`/lists/${vip}`)).body.data;
    const res = await f.api().delete(`/subscribers/${id}`).expect(200);
    expect(res.body).to.deep.equal({ success: true, message: `Subscriber ${id} deleted` });
    await f.api().get(`/subscribers/${id}`).expect(404);
    const after = (await f.api().get(`/lists/${vip}`)).body.data;
    expect(after).to.include({ subscriber_count: before.subscriber_count - 1, active_count: before.active_count - 1 });
  });

  it('hides other organizations: their ids answer 404', async () => {
    const id = (await f.api().post('/subscribers', { email: 'mine@example.com' }).expect(201)).body.data.id;
    const other = await createTenant(f.engine, { name: 'Spy' });
    await f.api(other).get(`/subscribers/${id}`).expect(404);
    await f.api(other).put(`/subscribers/${id}`, { first_name: 'X' }).expect(404);
    await f.api(other).delete(`/subscribers/${id}`).expect(404);
    await f.api(other).post(`/subscribers/${id}/unsubscribe`).expect(404);
  });

  it('needs subscribers:read and subscribers:write', async () => {
    const reader = await createTenant(f.engine, { permissions: ['subscribers:read'] });
    await f.api(reader).get('/subscribers').expect(200);
    const denied = await f.api(reader).post('/subscribers', { email: 'x@example.com' }).expect(403);
    expect(denied.body.error.code).to.equal('AUTH_INSUFFICIENT_PERMISSIONS');
  });
});
