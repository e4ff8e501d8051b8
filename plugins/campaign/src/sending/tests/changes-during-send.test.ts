import { expect } from 'chai';
import { describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { dailySchedule, draftMessage, listOf, mailsOf, makeDue } from '../../shared/tests/sending-support';
import { SendWatchdog } from '../watchdog';

/**
 * A send meets changes while it runs (a review's findings, session 26): a subscriber unsubscribed while
 * their claim of 50 is being mailed through a slow relay is not mailed, and sending again after a
 * schedule's run was cancelled goes on where the run stopped.
 */
describeEachBackend('campaign: changes while a send runs', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  before(async function () {
    this.timeout(60_000);
    // A slow relay: 400 ms a mail on each of the pool's 5 connections.
    sink = await smtpSink({ delayMs: 400 });
    f = await campaignFixture(backend(), { SMTP_URL: sink.url });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  const status = async (id: number) => (await f.api().get(`/messages/${id}`).expect(200)).body.data;
  const emails = (code: string, n: number) => Array.from({ length: n }, (_, i) => `${code}-${i}@example.com`);
  const idsOf = async (addresses: string[]) =>
    (await f.engine.knex('subscribers').whereIn('email', addresses).orderBy('id').pluck('id')).map(Number);

  it('does not mail whom the claim being mailed lost meanwhile', async function () {
    this.timeout(60_000);
    const addresses = emails('slow', 30);
    const list = await listOf(f, addresses, 'slow');
    const leaving = (await idsOf(addresses)).slice(-8);
    const id = await draftMessage(f, { name: 'Slow' });
    await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [list] })
      .expect(200);
    await waitFor(() => mailsOf(sink, id).length > 0, 15_000);
    for (const subscriber of leaving) await f.api().post(`/subscribers/${subscriber}/unsubscribe`, {}).expect(200);
    await waitFor(async () => (await status(id)).status === 'sent', 30_000);
    const left = addresses.slice(-8);
    expect(
      mailsOf(sink, id)
        .flatMap((m) => m.to)
        .filter((to) => left.includes(to)),
    ).to.deep.equal([]);
    expect((await status(id)).delivery).to.include({ sent: 22, skipped: 8 });
  });

  it("stops a cancelled schedule's run within a second, and sends again where it stopped: nobody twice", async function () {
    this.timeout(60_000);
    const addresses = emails('run', 30);
    const list = await listOf(f, addresses, 'run');
    const id = await draftMessage(f, { name: 'Run' });
    const schedule = await dailySchedule(f, id, [list], 1);
    await makeDue(f, schedule.id);
    await campaignContainer(f.engine).resolve(SendWatchdog).tick(new Date());
    await waitFor(() => mailsOf(sink, id).length >= 5, 15_000);
    await f.api().post(`/messages/${id}/cancel`, {}).expect(200);
    await waitFor(async () => (await status(id)).status === 'cancelled', 15_000);
    const inState = async (states: string[]) =>
      Number(
        (
          await f.engine
            .knex('send_recipients as r')
            .join('message_sends as s', 's.id', 'r.send_id')
            .where({ 's.message_id': id })
            .whereIn('r.state', states)
            .count({ n: '*' })
        )[0].n,
      );
    // The claims in flight when it was cancelled are mailed all the same (they may have gone out).
    await waitFor(async () => (await inState(['sending'])) === 0, 30_000);
    const reached = [{ n: await inState(['sent']) }];
    // The claim stopped within a second of the cancel: the rest stayed queued for a send again.
    expect(reached[0].n).to.be.below(30);
    const again = await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [list] })
      .expect(200);
    expect(again.body.data.recipients).to.equal(30 - Number(reached[0].n));
    await waitFor(async () => (await status(id)).status === 'sent', 30_000);
    const to = mailsOf(sink, id).flatMap((m) => m.to);
    expect(to.length, JSON.stringify((await status(id)).delivery)).to.equal(new Set(to).size);
    expect(new Set(to).size, JSON.stringify((await status(id)).delivery)).to.equal(30);
  });

  it("holds a schedule's run due while a send of its message runs, and fires it once that send ended", async function () {
    this.timeout(60_000);
    const addresses = emails('busy', 20);
    const list = await listOf(f, addresses, 'busy');
    const id = await draftMessage(f, { name: 'Busy' });
    await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [list] })
      .expect(200);
    const schedule = await dailySchedule(f, id, [list], 2);
    await makeDue(f, schedule.id);
    const watchdog = campaignContainer(f.engine).resolve(SendWatchdog);
    await watchdog.tick(new Date());
    const runs = async () => (await f.api().get(`/schedules/${schedule.id}`).expect(200)).body.data.run_count;
    expect(await runs()).to.equal(0);
    await waitFor(async () => (await status(id)).status === 'sent', 30_000);
    await watchdog.tick(new Date());
    expect(await runs()).to.equal(1);
    await waitFor(async () => (await status(id)).status === 'sent', 30_000);
    await f.api().delete(`/schedules/${schedule.id}`).expect(200);
  });
});
