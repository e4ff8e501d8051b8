import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion } from '../../../shared/tests/support';

describeEachBackend('campaign: upgrading to 1.5 (list memberships in the substring index)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('adds the memberships a 1.4 database holds to the index; rolls back to 1.4 and up again', async () => {
    at = await campaignAtVersion(backend(), '1.4');
    const { engine, api } = at;
    const knex = engine.knex;
    const one = (await api.post('/lists', { name: 'One', code: 'one' }).expect(201)).body.data.id;
    const two = (await api.post('/lists', { name: 'Two', code: 'two' }).expect(201)).body.data.id;
    // 5,500 subscribers in both lists: 11,000 memberships, more than the migration reads at once.
    for (let start = 0; start < 5500; start += 1000) {
      const rows = Array.from({ length: Math.min(1000, 5500 - start) }, (_, i) => ({
        email: `m${start + i}@up.test`,
        first_name: 'Member',
      }));
      await api
        .post('/subscribers/batch', { subscribers: rows, lists: [one, two], skip_confirmation: true })
        .expect(200);
    }
    const ada = (
      await api.post('/subscribers', { email: 'ada@up.test', first_name: 'Ada', confirmed: true }).expect(201)
    ).body.data.id;
    await api.post(`/lists/${one}/subscribers`, { subscriber_ids: [ada] }).expect(200);
    // A 1.4 database has no memberships in the index: only the migration can make these findable.
    await knex('subscriber_grams').where('subscriber_status', '').delete();
    const total = async (text: string) =>
      (await api.get(`/subscribers?search=${encodeURIComponent(text)}`).expect(200)).body.pagination.total;
    expect(await total('m54 list:two')).to.equal(0);

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.5' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.5/01-memberships-in-substring-index'] }]);
    // m54, m540 to m549, m5400 to m5499: on both sides of the migration's first chunk.
    expect(await total('m54 list:one')).to.equal(111);
    expect(await total('m54 list:two')).to.equal(111);
    expect(await total('name:ada list:one')).to.equal(1);
    expect(await total('name:ada list:two')).to.equal(0);

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.4' });
    expect(Number((await knex('subscriber_grams').where('subscriber_status', '').count({ n: '*' }))[0].n)).to.equal(0);
    expect(Number((await knex('list_subscribers').count({ n: '*' }))[0].n)).to.equal(11_001);

    await engine.migrator().latest({ plugin: 'campaign', to: '1.5' });
    expect(await total('m54 list:two')).to.equal(111);
    expect(await total('name:ada list:one')).to.equal(1);
  });
});
