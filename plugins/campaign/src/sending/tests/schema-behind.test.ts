import { expect } from 'chai';
import { JobQueues, SERVICES } from '@switchboard/core';
import { describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { deliveryOf, listOf, mailsOf, sendNow } from '../../shared/tests/sending-support';
import { SEND_RANGE_JOB } from '../send-job';

describeEachBackend('campaign: a worker whose schema was rolled back under it', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  before(async () => {
    sink = await smtpSink();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url, PUBLIC_URL: 'http://mail.test' });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  it('holds its send until the schema is migrated again, then mails each recipient once', async () => {
    const list = await listOf(f, ['ann@held.test', 'bob@held.test', 'cy@held.test'], 'held');
    await f.engine.migrator().rollback({ plugin: 'campaign', to: '1.15' });
    // Seen within one reading of the applied migrations (every 5 s at most).
    await waitFor(async () => !(await f.engine.schemaGate.isOpen()), 15_000);

    const id = await sendNow(f, [list]);
    // The range's job is taken, and held before its first claim: nothing is mailed, nothing fails.
    const sendRanges = f.engine.container.resolve<JobQueues>(SERVICES.Queues).get(SEND_RANGE_JOB);
    await waitFor(async () => (await sendRanges.counts()).active === 1, 15_000);
    expect(mailsOf(sink, id)).to.have.length(0);
    const states = await f.engine.knex('send_recipients').distinct('state').pluck('state');
    expect(states, 'no recipient claimed').to.deep.equal(['queued']);

    await f.engine.migrator().latest();
    await waitFor(() => mailsOf(sink, id).length === 3, 30_000);
    await waitFor(async () => (await deliveryOf(f, id)).status === 'sent', 30_000);
    expect((await deliveryOf(f, id)).sent).to.equal(3);
    const to = mailsOf(sink, id).map((m) => m.to.join());
    expect(to.sort()).to.deep.equal(['ann@held.test', 'bob@held.test', 'cy@held.test']);
    expect((await sendRanges.counts()).failed, 'no job failed').to.equal(0);
  }).timeout(90_000);
});
