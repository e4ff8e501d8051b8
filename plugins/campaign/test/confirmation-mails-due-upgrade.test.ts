import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion, campaignContainer } from '../src/shared/tests/support';
import { ConfirmationSweep } from '../src/audience/double-opt-in/confirmation-sweep';

/**
 * Issue 26: 1.14 records each unconfirmed subscriber's confirmation mail until it is sent, so a lost job is
 * queued again. The unconfirmed subscribers of 1.13 get no row: their mails were sent or lost before the
 * upgrade, and none is sent again. Rolled back, the table goes.
 */
describeEachBackend('campaign: upgrading to 1.14 (confirmation mails due)', (backend) => {
  it("keeps 1.13's unconfirmed subscribers unmailed, records new ones, and rolls back", async () => {
    const old = await campaignAtVersion(backend(), '1.13');
    try {
      const { engine, tenant } = old;
      const knex = engine.knex;
      await knex.schema.dropTable('confirmation_mails_due');
      const now = new Date();
      await knex('subscribers').insert(
        ['a', 'b', 'c'].map((name) => ({
          organization_id: tenant.organizationId,
          email: `${name}@old.test`,
          status: 'unconfirmed',
          created_at: now,
          updated_at: now,
          meta_data: '{}',
        })),
      );

      const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.14' });
      expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.14/01-confirmation-mails-due'] }]);
      expect(await knex('confirmation_mails_due').select()).to.deep.equal([]);
      const sweep = campaignContainer(engine).resolve(ConfirmationSweep);
      expect(await sweep.run(new Date(now.getTime() + 3_600_000))).to.equal(0);

      const created = (await old.api.post('/subscribers', { email: 'new@old.test', confirmed: false }).expect(201)).body
        .data.id;
      const rows = await knex('confirmation_mails_due').select('subscriber_id', 'organization_id');
      expect(rows.map((r: { subscriber_id: unknown }) => Number(r.subscriber_id))).to.deep.equal([created]);

      await engine.migrator().rollback({ plugin: 'campaign', to: '1.13' });
      expect(await knex.schema.hasTable('confirmation_mails_due')).to.equal(false);
      expect(await knex('subscribers').where({ status: 'unconfirmed' }).count({ n: '*' }).first()).to.deep.equal({
        n: 4,
      });
    } finally {
      await old.close();
    }
  });
});
