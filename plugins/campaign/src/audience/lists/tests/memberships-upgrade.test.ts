import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion } from '../../../shared/tests/support';

describeEachBackend('campaign: upgrading a 1.1 database to 1.2 (memberships keyed by subscriber)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('keeps the 1.1 memberships, their order, counts and uniqueness; rolls back to 1.1 the same', async () => {
    at = await campaignAtVersion(backend(), '1.1');
    const { engine, api } = at;
    const knex = engine.knex;
    const ids = async (path: string) => (await api.get(path).expect(200)).body.data.map((s: { id: number }) => s.id);
    const counts = async (list: number) => {
      const { subscriber_count, active_count } = (await api.get(`/lists/${list}`).expect(200)).body.data;
      return { subscriber_count, active_count };
    };

    const red = (await api.post('/lists', { name: 'Red', code: 'red' }).expect(201)).body.data.id;
    const blue = (await api.post('/lists', { name: 'Blue', code: 'blue' }).expect(201)).body.data.id;
    const rows = ['a', 'b', 'c', 'd'].map((n) => ({
      email: `${n}@upgrade.example`,
      lists: n === 'd' ? [blue] : [red, blue],
    }));
    await api.post('/subscribers/batch', { subscribers: rows, skip_confirmation: true }).expect(200);
    const [a, b, c, d] = await ids('/subscribers?per_page=10');
    await api.post(`/subscribers/${b}/unsubscribe`, {}).expect(200);

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.2' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.2/01-memberships-keyed-by-subscriber'] }]);

    // Members of a list by status, in id order, as before.
    expect(await ids(`/subscribers?list_id=${red}`)).to.deep.equal([a, c]);
    expect(await ids(`/subscribers?search=${encodeURIComponent('list:blue')}`)).to.deep.equal([a, c, d]);
    expect(await ids(`/subscribers?list_id=${red}&status=unsubscribed`)).to.deep.equal([b]);
    expect(await counts(red)).to.deep.equal({ subscriber_count: 3, active_count: 2 });
    const lists = (await api.get(`/subscribers/${a}`).expect(200)).body.data.lists
      .map((l: { code: string }) => l.code)
      .sort();
    expect(lists).to.deep.equal(['blue', 'red']);

    // A membership is still unique: adding it again adds nothing, writing it twice fails.
    expect(
      (await api.post(`/lists/${red}/subscribers`, { subscriber_ids: [a, d] }).expect(200)).body.data,
    ).to.deep.equal({ added: 1 });
    const twin = { list_id: red, subscriber_id: a, subscriber_status: 'active', created_at: new Date() };
    await expectRejected(knex('list_subscribers').insert(twin));
    expect(await counts(red)).to.deep.equal({ subscriber_count: 4, active_count: 3 });

    // A status change and a delete reach the memberships through the new primary key.
    await api.post(`/subscribers/${c}/unsubscribe`, {}).expect(200);
    expect(await ids(`/subscribers?list_id=${red}`)).to.deep.equal([a, d]);
    await api.delete(`/subscribers/${d}`).expect(200);
    expect(await knex('list_subscribers').where({ subscriber_id: d }).count({ n: '*' })).to.deep.equal([{ n: 0 }]);
    expect(await counts(red)).to.deep.equal({ subscriber_count: 3, active_count: 1 });

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.1' });
    expect(await ids(`/subscribers?search=${encodeURIComponent('list:red status:unsubscribed')}`)).to.deep.equal([
      b,
      c,
    ]);
    await expectRejected(knex('list_subscribers').insert(twin));
    expect(await counts(red)).to.deep.equal({ subscriber_count: 3, active_count: 1 });
  });
});

async function expectRejected(write: PromiseLike<unknown>): Promise<void> {
  const outcome = await Promise.resolve(write).then(
    () => 'written',
    (err: Error) => err.message,
  );
  expect(outcome).to.match(/duplicate|unique/i);
}
