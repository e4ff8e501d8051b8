import { expect } from 'chai';
import { describeEachBackend, createTenant } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../shared/tests/support';

describeEachBackend('campaign: schedules', (backend) => {
  let f: CampaignFixture;
  let messageId: number;
  before(async () => {
    f = await campaignFixture(backend());
    messageId = (await f.api().post('/messages', { name: 'Weekly', subject: 'Weekly' }).expect(201)).body.data.id;
  });
  after(() => f.close());

  const body = () => ({
    message_id: messageId,
    frequency: 'weekly',
    send_time: '09:00',
    timezone: 'Europe/Berlin',
    day_of_week: 1,
    max_runs: 10,
  });

  it('creates a schedule with next_run_at in UTC on the right weekday and local time', async () => {
    const res = await f.api().post('/schedules', body()).expect(201);
    const s = res.body.data;
    expect(s).to.include({
      message_id: messageId,
      frequency: 'weekly',
      send_time: '09:00',
      timezone: 'Europe/Berlin',
      day_of_week: 1,
      max_runs: 10,
      is_active: true,
      run_count: 0,
    });
    const next = new Date(s.next_run_at);
    expect(next.getTime()).to.be.greaterThan(Date.now());
    const local = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Berlin',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
    }).format(next);
    expect(local).to.equal('Mon 09:00');
  });

  it('validates time zone, time, day and message', async () => {
    // The IANA database's current names, whatever this Node's Intl lists (CLDR keeps Asia/Calcutta, Europe/Kiev).
    for (const timezone of ['Asia/Kolkata', 'Europe/Kyiv', 'America/Nuuk', 'Pacific/Kanton'])
      expect(
        (
          await f
            .api()
            .post('/schedules', { ...body(), timezone })
            .expect(201)
        ).body.data.timezone,
      ).to.equal(timezone);
    for (const timezone of ['Mars/Olympus', 'UTC', 'Etc/GMT+5', 'Etc/UTC', '+02:00', 'Asia/Calcutta', 'US/Eastern']) {
      const zone = await f
        .api()
        .post('/schedules', { ...body(), timezone })
        .expect(422);
      expect(zone.body.error.details).to.deep.equal({ field: 'timezone', rule: 'enum' });
    }
    const time = await f
      .api()
      .post('/schedules', { ...body(), send_time: '25:00' })
      .expect(422);
    expect(time.body.error.details).to.deep.equal({ field: 'send_time', rule: 'pattern' });
    const day = await f
      .api()
      .post('/schedules', { ...body(), day_of_week: undefined })
      .expect(422);
    expect(day.body.error.details).to.deep.equal({ field: 'day_of_week', rule: 'required' });
    const message = await f
      .api()
      .post('/schedules', { ...body(), message_id: 999999 })
      .expect(422);
    expect(message.body.error.details).to.deep.equal({ field: 'message_id', rule: 'exists' });
    const frequency = await f
      .api()
      .post('/schedules', { ...body(), frequency: 'hourly' })
      .expect(422);
    expect(frequency.body.error.details.field).to.equal('frequency');
  });

  it('pauses (is_active false, no next run) and resumes (next run recomputed)', async () => {
    const id = (await f.api().post('/schedules', body()).expect(201)).body.data.id;
    const paused = await f.api().post(`/schedules/${id}/pause`).expect(200);
    expect(paused.body.data).to.include({ is_active: false, next_run_at: null });
    const resumed = await f.api().post(`/schedules/${id}/resume`).expect(200);
    expect(resumed.body.data.is_active).to.equal(true);
    expect(resumed.body.data.next_run_at).to.be.a('string');
    const inactive = await f.api().get('/schedules?is_active=false').expect(200);
    expect(inactive.body.data.map((s: { id: number }) => s.id)).not.to.include(id);
    await f.api().post(`/schedules/${id}/pause`).expect(200);
    const filtered = await f.api().get(`/schedules?is_active=false&message_id=${messageId}`).expect(200);
    expect(filtered.body.data.map((s: { id: number }) => s.id)).to.include(id);
  });

  it('refuses to resume a schedule that made its max_runs', async () => {
    const id = (
      await f
        .api()
        .post('/schedules', { ...body(), max_runs: 2 })
        .expect(201)
    ).body.data.id;
    await f.engine.knex('message_schedules').where({ id }).update({ run_count: 2, is_active: false });
    const res = await f.api().post(`/schedules/${id}/resume`).expect(422);
    expect(res.body.error.details).to.deep.equal({ field: 'max_runs', rule: 'exhausted' });
  });

  it('updates the rule and recomputes the next run; deletes; hides other organizations', async () => {
    const id = (await f.api().post('/schedules', body()).expect(201)).body.data.id;
    const updated = await f
      .api()
      .put(`/schedules/${id}`, { day_of_week: 5, send_time: '17:45', timezone: 'America/New_York' })
      .expect(200);
    const local = new Intl.DateTimeFormat('en-US', {
      timeZone: 'America/New_York',
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    }).format(new Date(updated.body.data.next_run_at));
    expect(local).to.equal('Fri 17:45');
    const other = await createTenant(f.engine, { name: 'Other' });
    await f.api(other).get(`/schedules/${id}`).expect(404);
    await f.api().delete(`/schedules/${id}`).expect(200);
    await f.api().get(`/schedules/${id}`).expect(404);
  });
});
