import { expect } from 'chai';
import {
  DatabaseAway,
  databaseAwayFor,
  describeEachBackend,
  smtpSink,
  SmtpSink,
  waitFor,
} from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { deliveryOf, listOf, mailsOf, sendNow } from '../../shared/tests/sending-support';
import { SendStore } from '../send-store';

/**
 * A database away for a moment while a claim's mails are handed to SMTP (a review's finding, session 27):
 * the outcomes wait for it and are recorded once it is back; nobody is mailed twice. It used to drop them,
 * and the watchdog sent the claim again two minutes later.
 */
describeEachBackend('campaign: a database away while a send records its mails', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  before(async () => {
    sink = await smtpSink();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url });
    f.engine.startWorkers();
  });
  let away: DatabaseAway | undefined;
  after(async () => {
    away?.restore();
    await f?.close();
    await sink?.close();
  });

  it('records the outcomes once the database is back, and mails each recipient once', async () => {
    // The first two records of the send meet a connection refused.
    away = databaseAwayFor(SendStore.prototype, 'record', 2);
    const emails = Array.from({ length: 120 }, (_, i) => `away${i}@example.com`);
    const message = await sendNow(f, [await listOf(f, emails, 'away')]);
    await waitFor(async () => (await deliveryOf(f, message))?.status === 'sent', 30_000);
    away.restore();
    expect(away.refused).to.equal(2);
    const mailed = mailsOf(sink, message).map((m) => m.to[0]);
    expect(mailed).to.have.length(120);
    expect(new Set(mailed).size).to.equal(120);
    expect(await deliveryOf(f, message)).to.include({ sent: 120, failed: 0 });
  }).timeout(60_000);
});
