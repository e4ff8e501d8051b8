import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion } from '../../shared/tests/support';
import { oldMessageRow } from '../../shared/tests/sending-support';
import { down as withoutSendWaiting } from '../../../migrations/1.16/01-send-waiting';

describeEachBackend('campaign: upgrading a 1.15 database to 1.16 (a send waiting for its relay)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('keeps the sends of 1.15, waiting for nothing; rolls back to their columns', async () => {
    at = await campaignAtVersion(backend(), '1.15');
    const { engine, api, tenant } = at;
    const knex = engine.knex;
    const now = new Date();
    // The schema exactly as 1.15 left it (campaignAtVersion adds what today's code writes to), and a send of it.
    await withoutSendWaiting(knex);
    const messageId = await oldMessageRow(knex, tenant.organizationId, 'active');
    const [sendId] = await knex('message_sends').insert({
      organization_id: tenant.organizationId,
      message_id: messageId,
      status: 'active',
      list_ids: '[]',
      recipients: 3,
      sent: 1,
      started_at: now,
      created_at: now,
      updated_at: now,
    });

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.16' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.16/01-send-waiting'] }]);
    const { delivery } = (await api.get(`/messages/${messageId}`).expect(200)).body.data;
    expect(delivery).to.include({
      id: Number(sendId),
      status: 'active',
      sent: 1,
      waiting_since: null,
      waiting_reason: null,
    });

    await knex('message_sends')
      .where({ id: sendId })
      .update({ waiting_since: now, waiting_reason: 'connect ECONNREFUSED' });
    await engine.migrator().rollback({ plugin: 'campaign', to: '1.15' });
    expect(await knex.schema.hasColumn('message_sends', 'waiting_since')).to.equal(false);
    expect(await knex.schema.hasColumn('message_sends', 'waiting_reason')).to.equal(false);
    expect(await knex('message_sends').where({ id: sendId }).first('status', 'sent')).to.deep.include({
      status: 'active',
    });
  });
});
