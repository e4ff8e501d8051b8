import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion } from '../../shared/tests/support';

describeEachBackend('campaign: upgrading a 1.16 database to 1.17 (provider ids compared byte for byte)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('keeps the events of 1.16 and then records an event whose id differs from one only in case', async () => {
    at = await campaignAtVersion(backend(), '1.16');
    const { engine, tenant } = at;
    const knex = engine.knex;
    const mysql = knex.client.config.client === 'mysql2';
    // The columns as 1.9 made them on MariaDB: the table's default collation (1.17's down leaves them alone).
    if (mysql)
      await knex.raw(
        'alter table inbound_events modify provider_event_id varchar(191) character set utf8mb4 collate utf8mb4_general_ci not null',
      );
    const event = (id: string) => ({
      organization_id: tenant.organizationId,
      provider: 'provider_a',
      provider_event_id: id,
      event_type: 'delivered',
      payload: '{}',
      event_at: new Date(),
      received_at: new Date(),
      receipt: 'r',
    });
    await knex('inbound_events').insert(event('Ab-1'));
    const before = await knex('inbound_events')
      .insert(event('ab-1'))
      .then(
        () => 'recorded',
        () => 'taken for a retry',
      );
    expect(before).to.equal(mysql ? 'taken for a retry' : 'recorded');
    // (On MariaDB the old collation would delete both.)
    if (!mysql) await knex('inbound_events').where({ provider_event_id: 'ab-1' }).delete();

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.17' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.17/01-case-sensitive-ids'] }]);
    await knex('inbound_events').insert(event('ab-1'));
    const ids = await knex('inbound_events').orderBy('provider_event_id').pluck('provider_event_id');
    expect(ids).to.deep.equal(['Ab-1', 'ab-1']);
    if (mysql) {
      const [rows] = await knex.raw(
        `select table_name as t, column_name as c, collation_name as collation from information_schema.columns
          where table_schema = database() and column_name in ('provider_event_id', 'provider_message_id', 'relay_id')
          order by t, c`,
      );
      expect(rows.map((r: Record<string, string>) => `${r.t}.${r.c} ${r.collation}`)).to.deep.equal([
        'inbound_events.provider_event_id utf8mb4_nopad_bin',
        'inbound_events.provider_message_id utf8mb4_nopad_bin',
        'send_relay_ids.relay_id utf8mb4_nopad_bin',
      ]);
    }
    // Back to 1.16: the events stay, both of them.
    await engine.migrator().rollback({ plugin: 'campaign', to: '1.16' });
    expect(await knex('inbound_events').count({ n: '*' }).first()).to.deep.include({ n: 2 });
  }).timeout(60_000);
});
