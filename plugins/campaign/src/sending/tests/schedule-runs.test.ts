import { expect } from 'chai';
import { describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { dailySchedule, draftMessage, mailsOf, makeDue } from '../../shared/tests/sending-support';
import { SendWatchdog } from '../watchdog';
import { AnalyticsRebuild } from '../../analytics';

describeEachBackend('campaign: a schedule sends its message at each run', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let news: number;
  let vip: number;
  before(async () => {
    sink = await smtpSink();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url });
    f.engine.startWorkers();
    news = (await f.api().post('/lists', { name: 'News', code: 'news' }).expect(201)).body.data.id;
    vip = (await f.api().post('/lists', { name: 'VIP', code: 'vip' }).expect(201)).body.data.id;
    await f
      .api()
      .post('/subscribers', { email: 'ada@example.com', lists: [news], confirmed: true })
      .expect(201);
    await f
      .api()
      .post('/subscribers', { email: 'alan@example.com', lists: [vip], confirmed: true })
      .expect(201);
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  const message = () => draftMessage(f, { name: 'Weekly' });
  const recipientsOf = (id: number) => mailsOf(sink, id).flatMap((m) => m.to);
  const schedule = async (id: number) => (await f.api().get(`/schedules/${id}`).expect(200)).body.data;
  const watchdog = () => campaignContainer(f.engine).resolve(SendWatchdog);
  const sent = async (id: number) =>
    waitFor(async () => (await f.api().get(`/messages/${id}`).expect(200)).body.data.status === 'sent', 15_000);

  it('sends to its own list_ids, else to the lists of the message latest send, else to nobody', async () => {
    const id = await message();
    const body = { message_id: id, frequency: 'daily', send_time: '09:00', timezone: 'Europe/Berlin' };
    const foreign = await f
      .api()
      .post('/schedules', { ...body, list_ids: [news, 987_654] })
      .expect(422);
    expect(foreign.body.error.details).to.deep.equal({ field: 'list_ids', rule: 'exists' });
    // The spec's body (no lists) for a message never sent: its runs have nobody to send to.
    const bare = (await f.api().post('/schedules', body).expect(201)).body.data;
    expect(bare.list_ids).to.equal(null);
    await f.engine
      .knex('message_schedules')
      .where({ id: bare.id })
      .update({ next_run_at: new Date(Date.now() - 1000) });
    await watchdog().tick(new Date());
    await sent(id);
    const empty = (await f.api().get(`/messages/${id}`).expect(200)).body.data;
    expect(empty.delivery).to.include({ recipients: 0, sent: 0 });
    expect(empty.delivery.list_ids).to.deep.equal([]);
    expect((await schedule(bare.id)).run_count).to.equal(1);
    await f.api().delete(`/schedules/${bare.id}`).expect(200);

    // Once the message was sent to lists, a schedule without its own lists uses those.
    const other = await message();
    await f
      .api()
      .post(`/messages/${other}/send`, { list_ids: [vip] })
      .expect(200);
    await sent(other);
    const reusing = (
      await f
        .api()
        .post('/schedules', { ...body, message_id: other })
        .expect(201)
    ).body.data;
    await f.engine
      .knex('message_schedules')
      .where({ id: reusing.id })
      .update({ next_run_at: new Date(Date.now() - 1000) });
    await watchdog().tick(new Date());
    await waitFor(() => recipientsOf(other).length === 2, 15_000);
    expect(recipientsOf(other)).to.deep.equal(['alan@example.com', 'alan@example.com']);
    await f.api().delete(`/schedules/${reusing.id}`).expect(200);
    const own = (
      await f
        .api()
        .put(
          `/schedules/${
            (
              await f
                .api()
                .post('/schedules', { ...body, list_ids: [vip] })
                .expect(201)
            ).body.data.id
          }`,
          { list_ids: [news] },
        )
        .expect(200)
    ).body.data;
    expect(own.list_ids).to.deep.equal([news]);
    await f.api().delete(`/schedules/${own.id}`).expect(200);
  });

  it('fires at next_run_at: sends to the lists again, counts the run, computes the next, stops at max_runs', async () => {
    const id = await message();
    const created = await dailySchedule(f, id, [news, vip], 2);
    const arrive = async () => {
      await makeDue(f, created.id);
    };
    await arrive();
    // Two schedulers ticking at once: one run.
    await Promise.all([watchdog().tick(new Date()), watchdog().tick(new Date())]);
    await sent(id);
    expect(recipientsOf(id).sort()).to.deep.equal(['ada@example.com', 'alan@example.com']);
    let now = await schedule(created.id);
    expect(now).to.include({ run_count: 1, is_active: true });
    const next = new Date(now.next_run_at).getTime();
    expect(next - Date.now()).to.be.within(0, 25 * 3600_000);
    expect(new Date(next).toISOString()).to.match(/T0[78]:00:00\.000Z$/);
    expect(now.last_run_at).to.be.a('string');
    // Before its time nothing fires; at it, the second and last run goes to everybody again.
    await watchdog().tick(new Date());
    expect((await schedule(created.id)).run_count).to.equal(1);
    await arrive();
    await watchdog().tick(new Date());
    await waitFor(() => recipientsOf(id).length === 4, 15_000);
    await sent(id);
    now = await schedule(created.id);
    expect(now).to.include({ run_count: 2, is_active: false, next_run_at: null });
    expect((await f.api().get(`/messages/${id}`).expect(200)).body.data.stats.sent).to.equal(4);
    await f.api().post(`/schedules/${created.id}/resume`).expect(422);
  });

  it("keeps a run that waits for the message's send due through a change of max_runs and a resume", async () => {
    const id = await message();
    const created = await dailySchedule(f, id, [news], 5);
    await makeDue(f, created.id);
    const due = (await schedule(created.id)).next_run_at;
    // The message's previous send still going (a slow run, say): the run waits for it.
    const now = new Date();
    const [busy] = await f.engine.knex('message_sends').insert({
      organization_id: f.tenant.organizationId,
      message_id: id,
      status: 'active',
      list_ids: JSON.stringify([news]),
      test_mode: false,
      created_at: now,
      updated_at: now,
    });
    await watchdog().tick(new Date());
    expect(await schedule(created.id)).to.include({ run_count: 0, next_run_at: due });
    // Neither a change that keeps the timing nor a resume of the active schedule drops it (both did).
    expect(
      (await f.api().put(`/schedules/${created.id}`, { max_runs: 10 }).expect(200)).body.data.next_run_at,
    ).to.equal(due);
    expect((await f.api().post(`/schedules/${created.id}/resume`).expect(200)).body.data.next_run_at).to.equal(due);
    await f.engine.knex('message_sends').where({ id: busy }).update({ status: 'cancelled' });
    await watchdog().tick(new Date());
    await waitFor(() => recipientsOf(id).length === 1, 15_000);
    expect(await schedule(created.id)).to.include({ run_count: 1 });
    // A change of its time computes the next run again.
    const moved = (await f.api().put(`/schedules/${created.id}`, { send_time: '10:15' }).expect(200)).body.data;
    expect(moved.next_run_at).to.match(/T0[89]:15:00\.000Z$/);
  });

  it("rebuilds the analytics' messages sent as counted live: every run of a schedule, not its message's last", async () => {
    const organization_id = f.tenant.organizationId;
    const sentByDay = () =>
      f.engine
        .knex('analytics_daily')
        .where({ organization_id, metric: 'messages.sent' })
        .orderBy('day')
        .select('day', 'value');
    // The tests before leave their last run's send to finish (their recipients got the mail before it is counted).
    const active = () => f.engine.knex('message_sends').where({ organization_id, status: 'active' }).first('id');
    await waitFor(async () => !(await active()), 15_000);
    const live = await sentByDay();
    // The runs of this file's schedules: several sends of each message.
    expect(live.reduce((sum, r) => sum + Number(r.value), 0)).to.be.at.least(4);
    // A message sent before campaign 1.6 has no send rows: counted on its sent_at.
    const sentAt = new Date(Date.UTC(2025, 5, 1, 12));
    await f.engine.knex('messages').insert({
      organization_id,
      name: 'Sent before 1.6',
      subject: 'Old',
      status: 'sent',
      sent_at: sentAt,
      created_at: sentAt,
      updated_at: sentAt,
    });
    await f.engine.knex('analytics_daily').where({ organization_id }).delete();
    await campaignContainer(f.engine).resolve(AnalyticsRebuild).run(organization_id);
    expect(await sentByDay()).to.deep.equal([{ day: '2025-06-01', value: 1 }, ...live]);
  });
});
