import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion } from '../../shared/tests/support';
import { oldMessageRow } from '../../shared/tests/sending-support';

describeEachBackend('campaign: upgrading to 1.6 (sending)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('keeps the messages and schedules of a 1.5 database, adds sends, tracking flags and schedule lists; rolls back', async () => {
    at = await campaignAtVersion(backend(), '1.5');
    const { engine, api, tenant } = at;
    const knex = engine.knex;
    const now = new Date();
    // Rows as 1.5 wrote them (today's code writes the 1.6 columns).
    const messageId = await oldMessageRow(knex, tenant.organizationId);
    await knex('message_schedules').insert({
      organization_id: tenant.organizationId,
      message_id: messageId,
      frequency: 'daily',
      send_time: '09:00',
      timezone: 'Europe/Berlin',
      run_count: 0,
      is_active: true,
      next_run_at: new Date(now.getTime() + 86_400_000),
      created_at: now,
      updated_at: now,
    });
    expect(await knex.schema.hasTable('message_sends')).to.equal(false);

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.6' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.6/01-sends-and-recipients'] }]);
    const message = (await api.get(`/messages/${messageId}`).expect(200)).body.data;
    expect(message).to.include({ subject: 'Old news', track_opens: false, track_clicks: false, delivery: null });
    const schedules = (await api.get('/schedules').expect(200)).body.data;
    expect(schedules.map((s: { list_ids: unknown; message_id: number }) => [s.message_id, s.list_ids])).to.deep.equal([
      [messageId, null],
    ]);
    const list = (await api.post('/lists', { name: 'L', code: 'l' }).expect(201)).body.data.id;
    await api.post(`/messages/${messageId}/send`, { list_ids: [list], test_mode: true }).expect(200);

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.5' });
    expect(await knex.schema.hasTable('message_sends')).to.equal(false);
    expect(await knex.schema.hasColumn('messages', 'track_opens')).to.equal(false);
    expect(await knex.schema.hasColumn('message_schedules', 'list_ids')).to.equal(false);
    expect(Number((await knex('message_schedules').count({ n: '*' }))[0].n)).to.equal(1);
    expect((await knex('messages').where({ id: messageId }).first('subject')).subject).to.equal('Old news');
  });
});
