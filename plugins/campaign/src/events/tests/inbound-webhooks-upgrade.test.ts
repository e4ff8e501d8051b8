import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion } from '../../shared/tests/support';

describeEachBackend('campaign: upgrading to 1.9 (inbound webhooks)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('keeps a 1.8 database, adds endpoints, event records and relay ids; rolls back without touching the rest', async () => {
    at = await campaignAtVersion(backend(), '1.8');
    const { engine, api } = at;
    const knex = engine.knex;
    const subscriber = (await api.post('/subscribers', { email: 'kept@example.com' }).expect(201)).body.data.id;
    const message = (await api.post('/messages', { name: 'Kept', subject: 'S' }).expect(201)).body.data.id;
    expect(await knex.schema.hasTable('inbound_webhooks')).to.equal(false);

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.9' });
    expect(applied).to.deep.equal([
      { plugin: 'campaign', applied: ['1.9/01-inbound-webhooks', '1.9/02-send-relay-ids'] },
    ]);
    expect(await knex.schema.hasTable('send_relay_ids')).to.equal(true);
    const endpoint = (await api.post('/inbound-webhooks', { provider: 'provider_c', name: 'PM' }).expect(201)).body
      .data;
    expect(endpoint.has_secret).to.equal(true);

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.8' });
    expect(await knex.schema.hasTable('inbound_webhooks')).to.equal(false);
    expect(await knex.schema.hasTable('inbound_events')).to.equal(false);
    expect(await knex.schema.hasTable('send_relay_ids')).to.equal(false);
    await api.get(`/subscribers/${subscriber}`).expect(200);
    await api.get(`/messages/${message}`).expect(200);
  });
});
