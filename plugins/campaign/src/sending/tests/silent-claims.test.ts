import { expect } from 'chai';
import { describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { deliveryOf, listOf, mailsOf, sendNow } from '../../shared/tests/sending-support';
import { SendStore } from '../send-store';
import { SendWatchdog } from '../watchdog';

describeEachBackend('campaign: a send whose worker stopped with mail claimed', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  before(async () => {
    sink = await smtpSink();
    // Workers start once the claim below is left behind, as by a killed worker.
    f = await campaignFixture(backend(), { SMTP_URL: sink.url, PUBLIC_URL: 'http://mail.test' });
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  it('says it waits for the claim to lapse, then sends it and stops saying so', async () => {
    const list = await listOf(f, ['one@silent.test', 'two@silent.test', 'three@silent.test'], 'silent');
    const id = await sendNow(f, [list]);
    const sendId = (await deliveryOf(f, id)).id as number;
    const store = campaignContainer(f.engine).resolve(SendStore);
    const watchdog = campaignContainer(f.engine).resolve(SendWatchdog);
    // A worker claims the three, then is killed: nothing renews its claim.
    const claim = await store.claim(sendId, 0, 1e9);
    expect(claim?.ids).to.have.length(3);
    const claimedAt = Date.now();

    await watchdog.tick(new Date(claimedAt + 30_000));
    expect(await deliveryOf(f, id), 'renewed within 30 s by a live worker').to.include({ waiting_reason: null });
    await watchdog.tick(new Date(claimedAt + 70_000));
    const waiting = await deliveryOf(f, id);
    expect(waiting).to.include({ status: 'active', queued: 3 });
    expect(waiting.waiting_since).to.be.a('string');
    expect(waiting.waiting_reason).to.match(
      /^3 recipients claimed by a worker that stopped renewing its claim at \S+: sent again once the claim lapses, at \S+ \(those whose mail SMTP had taken get it twice\)$/,
    );

    // The lease ends: the claim is given back and sent; mail passing clears the wait.
    f.engine.startWorkers();
    await watchdog.tick(new Date(claimedAt + 121_000));
    await waitFor(async () => (await deliveryOf(f, id)).status === 'sent', 30_000);
    expect(mailsOf(sink, id)).to.have.length(3);
    const [sent] = await f.engine.knex('message_sends').where({ id: sendId }).select('waiting_since', 'waiting_reason');
    expect(sent).to.deep.equal({ waiting_since: null, waiting_reason: null });
  }).timeout(60_000);
});
