import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion } from '../../../shared/tests/support';

describeEachBackend('campaign: upgrading to 1.7 (message defaults)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it("keeps a 1.6 database's tracking choices, adds the organization's defaults (off); rolls back", async () => {
    at = await campaignAtVersion(backend(), '1.6');
    const { engine, api, tenant } = at;
    const knex = engine.knex;
    const now = new Date();
    // A row as 1.6 wrote it (today's code reads the 1.7 defaults to create one).
    const [id] = await knex('messages').insert({
      organization_id: tenant.organizationId,
      name: 'T',
      subject: 'S',
      status: 'draft',
      track_opens: true,
      created_at: now,
      updated_at: now,
    });
    const tracked = { id: Number(id) };
    expect(await knex.schema.hasTable('message_defaults')).to.equal(false);

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.7' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.7/01-message-defaults'] }]);
    expect((await api.get(`/messages/${tracked.id}`).expect(200)).body.data).to.include({
      track_opens: true,
      track_clicks: false,
    });
    expect((await api.get('/message-defaults').expect(200)).body.data).to.deep.equal({
      track_opens: false,
      track_clicks: false,
    });
    await api.put('/message-defaults', { track_opens: true }).expect(200);
    expect((await api.post('/messages', { name: 'N', subject: 'S' }).expect(201)).body.data.track_opens).to.equal(true);

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.6' });
    expect(await knex.schema.hasTable('message_defaults')).to.equal(false);
    expect(Number((await knex('messages').count({ n: '*' }))[0].n)).to.equal(2);
  });
});
