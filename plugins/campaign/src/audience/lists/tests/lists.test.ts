import { expect } from 'chai';
import { describeEachBackend, createTenant } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../../shared/tests/support';

describeEachBackend('campaign: lists', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend());
  });
  after(() => f.close());

  it('creates, reads, updates and deletes a list; code is unique per organization', async () => {
    const created = await f
      .api()
      .post('/lists', { name: 'Weekly', code: 'weekly', description: 'the digest' })
      .expect(201);
    expect(created.body.data).to.deep.include({
      name: 'Weekly',
      code: 'weekly',
      description: 'the digest',
      subscriber_count: 0,
      active_count: 0,
    });
    const id = created.body.data.id;
    const dup = await f.api().post('/lists', { name: 'Again', code: 'weekly' }).expect(409);
    expect(dup.body.error).to.deep.include({ code: 'DUPLICATE_ENTRY', details: { field: 'code', rule: 'unique' } });
    const other = await createTenant(f.engine, { name: 'Other' });
    await f.api(other).post('/lists', { name: 'Theirs', code: 'weekly' }).expect(201);
    await f.api(other).get(`/lists/${id}`).expect(404);

    const updated = await f.api().put(`/lists/${id}`, { name: 'Weekly digest' }).expect(200);
    expect(updated.body.data).to.include({ name: 'Weekly digest', code: 'weekly' });
    const all = await f.api().get('/lists').expect(200);
    expect(all.body.data.map((l: { code: string }) => l.code)).to.include('weekly');
    const bad = await f.api().post('/lists', { name: 'Bad', code: 'Has Spaces' }).expect(422);
    expect(bad.body.error.details).to.deep.equal({ field: 'code', rule: 'pattern' });

    expect((await f.api().delete(`/lists/${id}`).expect(200)).body).to.deep.equal({
      success: true,
      message: `List ${id} deleted`,
    });
    await f.api().get(`/lists/${id}`).expect(404);
  });

  it('adds and removes subscribers, keeping subscriber_count and active_count right', async () => {
    const list = (await f.api().post('/lists', { name: 'Members', code: 'members' }).expect(201)).body.data.id;
    const ids: number[] = [];
    for (const email of ['a@m.example', 'b@m.example', 'c@m.example'])
      ids.push((await f.api().post('/subscribers', { email }).expect(201)).body.data.id);
    const unconfirmed = (await f.api().post('/subscribers', { email: 'u@m.example', confirmed: false }).expect(201))
      .body.data.id;

    const added = await f
      .api()
      .post(`/lists/${list}/subscribers`, { subscriber_ids: [...ids, unconfirmed] })
      .expect(200);
    expect(added.body).to.deep.include({ success: true, data: { added: 4 } });
    // An action's answer says what was done and carries the meta of every success (campaign spec §1, §9).
    expect(added.body.message).to.be.a('string').and.not.empty;
    expect(added.body.meta.version).to.be.a('string').and.not.empty;
    expect(new Date(added.body.meta.timestamp).toISOString()).to.equal(added.body.meta.timestamp);
    const again = await f
      .api()
      .post(`/lists/${list}/subscribers`, { subscriber_ids: [ids[0]] })
      .expect(200);
    expect(again.body.data).to.deep.equal({ added: 0 });
    expect((await f.api().get(`/lists/${list}`)).body.data).to.include({ subscriber_count: 4, active_count: 3 });

    const removed = await f
      .api()
      .delete(`/lists/${list}/subscribers`, { subscriber_ids: [ids[0], unconfirmed] })
      .expect(200);
    expect(removed.body.data).to.deep.equal({ removed: 2 });
    expect((await f.api().get(`/lists/${list}`)).body.data).to.include({ subscriber_count: 2, active_count: 2 });

    const members = await f.api().get(`/subscribers?list_id=${list}`).expect(200);
    expect(members.body.data.map((s: { id: number }) => s.id)).to.deep.equal([ids[1], ids[2]]);
    expect(members.body.pagination.total).to.equal(2);

    const missing = await f
      .api()
      .post(`/lists/${list}/subscribers`, { subscriber_ids: [987654] })
      .expect(422);
    expect(missing.body.error.details).to.deep.equal({ field: 'subscriber_ids', rule: 'exists' });
  });

  it('keeps the counters equal to a recount after a mix of changes', async () => {
    const list = (await f.api().post('/lists', { name: 'Mix', code: 'mix' }).expect(201)).body.data.id;
    const ids: number[] = [];
    for (let i = 0; i < 6; i++)
      ids.push(
        (
          await f
            .api()
            .post('/subscribers', { email: `mix${i}@example.com`, lists: [list] })
            .expect(201)
        ).body.data.id,
      );
    await f.api().post(`/subscribers/${ids[0]}/unsubscribe`).expect(200);
    await f.api().delete(`/subscribers/${ids[1]}`).expect(200);
    await f.api().put(`/subscribers/${ids[2]}`, { lists: [] }).expect(200);
    const counted = await f.engine
      .knex('list_subscribers as ls')
      .join('subscribers as s', 's.id', 'ls.subscriber_id')
      .where('ls.list_id', list)
      .select('s.status');
    const stored = (await f.api().get(`/lists/${list}`)).body.data;
    expect(stored.subscriber_count).to.equal(counted.length);
    expect(stored.active_count).to.equal(counted.filter((r: { status: string }) => r.status === 'active').length);
    const [{ n }] = await f.engine
      .knex('subscribers')
      .where({ organization_id: f.tenant.organizationId, status: 'active' })
      .count({ n: '*' });
    const active = await f.api().get('/subscribers?per_page=1').expect(200);
    expect(active.body.pagination.total).to.equal(Number(n));
  });
});
