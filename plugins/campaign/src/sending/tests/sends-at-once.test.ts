import { expect } from 'chai';
import type { Knex } from 'knex';
import { byPrimaryKey } from '@switchboard/core';
import { describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { SendStore } from '../send-store';
import { listOf, mailsOf, sendNow } from '../../shared/tests/sending-support';

/**
 * Sends at once to small lists (session 28): on MariaDB a claim's record scanned the whole small
 * `send_recipients` and `subscribers` tables and locked every row it passed, so sends at once deadlocked
 * over rows none of them needed; three at once stalled the mail-event replay test in CI, and a record that
 * ran out of tries would have left its mailed claim to be mailed again. A record now locks its claim's rows
 * by key only: it goes through while another send's recipients and subscribers are held.
 */
describeEachBackend('campaign: sends at once', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  // A relay made slow for one test (read at each mail).
  const relay = { delayMs: 0 };
  before(async function () {
    this.timeout(60_000);
    sink = await smtpSink(relay);
    f = await campaignFixture(backend(), { SMTP_URL: sink.url });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  const emails = (code: string) => Array.from({ length: 12 }, (_, i) => `${code}-${i}@example.com`);
  const statusOf = async (id: number) => (await f.api().get(`/messages/${id}`).expect(200)).body.data.status;
  const allSent = (ids: number[]) =>
    waitFor(async () => (await Promise.all(ids.map(statusOf))).every((s) => s === 'sent'), 20_000);
  const mailedOnce = (id: number, addresses: string[]) =>
    expect(
      mailsOf(sink, id)
        .flatMap((m) => m.to)
        .sort(),
    ).to.deep.equal([...addresses].sort());

  it("records a send while another send's recipients and subscribers are held (MariaDB's row locks)", async function () {
    this.timeout(60_000);
    const [held, free] = [emails('held'), emails('free')];
    const heldList = await listOf(f, held, 'held');
    const freeList = await listOf(f, free, 'free');
    const first = await sendNow(f, [heldList]);
    await allSent([first]);
    relay.delayMs = 300;
    const second = await sendNow(f, [freeList]);
    let holder: Knex.Transaction | null = null;
    try {
      if (backend().name === 'mysql+redis') {
        // What another send's record holds until its commit, taken while the second send's mails are
        // with the slow relay: that send's claim's rows and their subscribers.
        holder = await f.engine.knex.transaction();
        const [send] = await holder('message_sends').where({ message_id: first }).pluck('id');
        const ids = (await holder('subscribers').whereIn('email', held).pluck('id')).map(Number);
        // Written, not read locked: as a record's statements do (a read of keys alone may scan the whole index).
        const byKey = (table: string) => holder!(holder!.raw(byPrimaryKey(holder!, table)));
        await byKey('send_recipients')
          .where({ send_id: send })
          .whereIn('subscriber_id', ids)
          .update({ attempts: holder.raw('attempts') });
        await byKey('subscribers')
          .whereIn('id', ids)
          .update({ messages_received: holder.raw('messages_received') });
      }
      await allSent([second]);
      mailedOnce(second, free);
    } finally {
      await holder?.rollback();
      relay.delayMs = 0;
    }
  });

  it('finishes three sends started at once to one list, every mail once', async function () {
    this.timeout(60_000);
    const addresses = emails('shared');
    const list = await listOf(f, addresses, 'shared');
    const messages = await Promise.all([0, 1, 2].map(() => sendNow(f, [list])));
    await allSent(messages);
    for (const id of messages) mailedOnce(id, addresses);
  });

  it('renews and records a claim another worker emptied (no ids) as nothing', async function () {
    this.timeout(60_000);
    const store = campaignContainer(f.engine).resolve(SendStore);
    const message = await sendNow(f, [await listOf(f, ['emptied@example.com'], 'emptied')]);
    await allSent([message]);
    const [send] = await f.engine.knex('message_sends').where({ message_id: message }).pluck('id');
    const empty = { token: 'emptied', ids: [] };
    await store.renew(Number(send), empty);
    const row = (await store.get(Number(send)))!;
    await store.record(row, empty, []);
    expect(await f.engine.knex('send_recipients').where({ claim: 'emptied' }).count({ n: '*' })).to.deep.equal([
      { n: 0 },
    ]);
  });
});
