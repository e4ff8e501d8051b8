import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion } from '../../../shared/tests/support';

describeEachBackend('campaign: upgrading to 1.8 (prefixes from the substring index)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it("drops a 1.7 database's word table, keeps every subscriber found by prefix; rolls back with the words", async () => {
    at = await campaignAtVersion(backend(), '1.7');
    const { engine, api, tenant } = at;
    const knex = engine.knex;
    const people = [
      { email: 'ada.lovelace@example.com', first_name: 'Ada', last_name: 'Lovelace' },
      { email: 'jm@muenchen.example', first_name: 'Jürgen', last_name: 'Müller' },
    ];
    await api.post('/subscribers/batch', { subscribers: people, skip_confirmation: true }).expect(200);
    const ids = (await api.get('/subscribers').expect(200)).body.data.map((s: { id: number }) => s.id);
    // The word rows 1.7 wrote for Ada (today's code writes none).
    await knex('subscriber_tokens').insert(
      ['ada', 'lovelace'].map((token) => ({
        organization_id: tenant.organizationId,
        subscriber_id: ids[0],
        kind: 'n',
        token,
        subscriber_status: 'active',
      })),
    );

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.8' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.8/01-drop-search-words'] }]);
    expect(await knex.schema.hasTable('subscriber_tokens')).to.equal(false);
    const found = async (text: string) =>
      (await api.get(`/subscribers?search=${encodeURIComponent(text)}`).expect(200)).body.data.map(
        (s: { id: number }) => s.id,
      );
    expect(await found('name:lov*')).to.deep.equal([ids[0]]);
    expect(await found('lovelace*')).to.deep.equal([ids[0]]);
    expect(await found('name:mull*')).to.deep.equal([ids[1]]);
    expect(await found('muenchen*')).to.deep.equal([ids[1]]);

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.7' });
    const words = async (id: number) =>
      (
        await knex('subscriber_tokens').where({ subscriber_id: id }).orderBy(['kind', 'token']).select('kind', 'token')
      ).map((r: { kind: string; token: string }) => `${r.kind}:${r.token}`);
    expect(await words(ids[0])).to.deep.equal([
      'e:ada',
      'e:ada.lovelace',
      'e:example.com',
      'e:lovelace',
      'n:ada',
      'n:lovelace',
    ]);
    // 1.0's words: lower-cased, accents kept.
    expect(await words(ids[1])).to.deep.equal(['e:jm', 'e:muenchen.example', 'n:jürgen', 'n:müller']);
    expect(Number((await knex('subscribers').count({ n: '*' }))[0].n)).to.equal(2);

    await engine.migrator().latest({ plugin: 'campaign' });
    expect(await knex.schema.hasTable('subscriber_tokens')).to.equal(false);
    expect(await found('name:ada*')).to.deep.equal([ids[0]]);
  });
});
