import { expect } from 'chai';
import type { Knex } from 'knex';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { draftMessage, listOf } from '../../shared/tests/sending-support';
import { recordLinkUnsubscribe } from '../own-records';

describeEachBackend('campaign: our own unsubscribe records', (backend) => {
  let f: CampaignFixture;
  before(async function () {
    this.timeout(60_000);
    f = await campaignFixture(backend());
  });
  after(async () => f?.close());

  it('records a link unsubscribe once, also when another process records it between the read and the insert', async () => {
    await listOf(f, ['own@example.com']);
    const organizationId = f.tenant.organizationId;
    const subscriberId = Number(
      (await f.engine.knex('subscribers').where({ email: 'own@example.com' }).first('id')).id,
    );
    const ids = { organizationId, messageId: await draftMessage(f), subscriberId };
    const now = new Date();
    expect(await f.engine.knex.transaction((trx) => recordLinkUnsubscribe(trx, ids, now))).to.equal(true);
    expect(await f.engine.knex.transaction((trx) => recordLinkUnsubscribe(trx, ids, now))).to.equal(false);
    // As if the row came from another process after this transaction looked: its read finds none.
    const late = await f.engine.knex.transaction((trx) => {
      const blind = ((table: string) => {
        const query = trx(table);
        return Object.assign(query, { first: async () => undefined });
      }) as unknown as Knex.Transaction;
      return recordLinkUnsubscribe(blind, ids, now);
    });
    expect(late).to.equal(false);
    const rows = await f.engine
      .knex('inbound_events')
      .where({ organization_id: organizationId, event_type: 'unsubscribed' });
    expect(rows).to.have.length(1);
  });
});
