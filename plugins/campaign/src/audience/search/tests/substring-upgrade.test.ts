import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion } from '../../../shared/tests/support';

describeEachBackend('campaign: upgrading to 1.4 (the substring index)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('builds the index for the subscribers a 1.3 database holds; rolls back to 1.3 and up again', async () => {
    at = await campaignAtVersion(backend(), '1.3');
    const { engine, api } = at;
    const knex = engine.knex;
    const people = [
      { email: 'ada@old.example', first_name: 'Ada', last_name: 'Lovelace' },
      { email: 'nptq@old.example', first_name: 'Zed', last_name: 'Nptq' },
      { email: 'mueller@old.example', first_name: 'Jürgen', last_name: 'Müller' },
    ];
    await api.post('/subscribers/batch', { subscribers: people, skip_confirmation: true }).expect(200);
    const gone = (await api.post('/subscribers', { email: 'gone@old.example', first_name: 'Adagio' }).expect(201)).body
      .data.id;
    await api.post(`/subscribers/${gone}/unsubscribe`).expect(200);
    // A 1.3 database has no substring index: only the migration can make these searchable.
    await knex.schema.dropTable('subscriber_grams');

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.4' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.4/01-substring-index'] }]);
    const found = async (text: string, extra = '') =>
      (await api.get(`/subscribers?search=${encodeURIComponent(text)}${extra}`).expect(200)).body.data.map(
        (s: { email: string }) => s.email,
      );
    expect(await found('name:ada')).to.deep.equal(['ada@old.example']);
    expect(await found('name:ada', '&status=unsubscribed')).to.deep.equal(['gone@old.example']);
    expect(await found('ptq')).to.deep.equal(['nptq@old.example']);
    expect(await found('name:muller old.example')).to.deep.equal(['mueller@old.example']);

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.3' });
    expect(await knex.schema.hasTable('subscriber_grams')).to.equal(false);
    expect(Number((await knex('subscribers').count({ n: '*' }))[0].n)).to.equal(4);

    await engine.migrator().latest({ plugin: 'campaign', to: '1.4' });
    expect(await found('name:"zed np"')).to.deep.equal(['nptq@old.example']);
  });
});
