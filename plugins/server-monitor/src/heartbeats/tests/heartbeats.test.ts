import { expect } from 'chai';
import { hashToken } from '@switchboard/core';
import request from 'supertest';
import { describeEachBackend, ManualClock, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { HeartbeatService } from '../service';
import { AlertService } from '../../alerts';
import { addServer, monitorFixture, MonitorFixture, organization, user } from '../../shared/tests/support';

describeEachBackend('server-monitor: heartbeats', (backend) => {
  let f: MonitorFixture;
  let sink: SmtpSink;
  const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
  before(async () => {
    sink = await smtpSink();
    f = await monitorFixture(backend(), { clock, env: { SMTP_URL: sink.url, PUBLIC_URL: 'http://mon.test' } });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  const heartbeats = () => f.engine.contexts.get('server-monitor')!.container.resolve(HeartbeatService);
  const subjects = async (to: string) => Promise.all(sink.to(to).map(async (m) => (await m.parse()).subject));

  it('takes pings by GET, POST and HEAD; counts missing ones, alerts once per outage and on recovery', async () => {
    const org = await organization(f.engine, { plan: 'free', admin: 'beats@acme.test' });
    const backup = await addServer(f.engine, org, 'https://backup.test/', { title: 'Backup' });
    const cron = await addServer(f.engine, org, 'https://cron.test/', { title: 'Cron' });
    const idle = await organization(f.engine, { plan: 'pro', subscription: 'inactive' });
    const ignored = await addServer(f.engine, idle, 'https://idle.test/');
    const a = await heartbeats().create(backup, 300, 60);
    const b = await heartbeats().create(cron, 60);
    await heartbeats().create(ignored, 60);
    expect(a.url).to.equal(`http://mon.test/api/servermonitor/ping/${a.token}`);
    // Kept as its digest, as API tokens are: the database alone pings for no one.
    const stored = await f.engine.knex('monitor_heartbeats').where({ id: a.id }).first('token');
    expect(stored.token).to.equal(hashToken(a.token)).and.not.equal(a.token);

    const ping = (token: string) => `/api/servermonitor/ping/${token}`;
    expect((await request(f.server).get(ping(a.token)).expect(200)).body).to.deep.equal({
      success: true,
      message: 'Pong',
    });
    await request(f.server).post(ping(b.token)).send('job finished').expect(200);
    await request(f.server).head(ping(b.token)).expect(200);
    expect((await request(f.server).get(ping('no-such-token')).expect(404)).body).to.deep.equal({
      success: false,
      message: 'Unknown heartbeat',
    });
    expect((await f.call('/check/heartbeats').expect(200)).body).to.include({ success: true, missing: 0, healthy: 2 });

    // Two minutes without a ping: Cron (60 s + 60 s grace) is missing, Backup (300 s) is not yet.
    clock.advance(121_000);
    const late = (await f.call('/check/heartbeats').expect(200)).body;
    expect(late).to.include({ missing: 1, healthy: 1 });
    expect(late.message).to.contain('1 missing (1 newly alerted)');
    expect((await f.call('/check/heartbeats').expect(200)).body).to.include({ missing: 1, healthy: 1 });
    await waitFor(() => sink.to('beats@acme.test').length === 1, 10_000);
    expect(await subjects('beats@acme.test')).to.deep.equal(['Heartbeat missing: Cron']);

    // Pings resume: a recovery notice, and the next outage is alerted again.
    await request(f.server).get(ping(b.token)).expect(200);
    expect((await f.call('/check/heartbeats').expect(200)).body).to.include({ missing: 0, healthy: 2 });
    await waitFor(() => sink.to('beats@acme.test').length === 2, 10_000);
    expect((await subjects('beats@acme.test'))[1]).to.equal('Heartbeat back: Cron');
    clock.advance(400_000);
    expect((await f.call('/check/heartbeats').expect(200)).body).to.include({ missing: 2, healthy: 0 });
    await waitFor(() => sink.to('beats@acme.test').length === 4, 10_000);
  });

  it("keeps each of a server's heartbeats' alerts to itself: one's back lapses none of the other's missing", async () => {
    // No one to tell yet: both "missing" alerts are kept unheard.
    const org = await organization(f.engine, { plan: 'free' });
    const jobs = await addServer(f.engine, org, 'https://jobs.test/', { title: 'Jobs' });
    const nightly = await heartbeats().create(jobs, 60);
    const hourly = await heartbeats().create(jobs, 60);
    clock.advance(121_000);
    await f.call('/check/heartbeats').expect(200);
    const alerts = () =>
      f.engine
        .knex('monitor_alerts')
        .where({ server_id: jobs })
        .orderBy('id')
        .select('kind', 'heartbeat_id', 'state', 'body');
    expect((await alerts()).map((a) => [a.kind, a.heartbeat_id, a.state])).to.deep.equal([
      ['heartbeat-missing', nightly.id, 'unheard'],
      ['heartbeat-missing', hourly.id, 'unheard'],
    ]);
    expect((await alerts())[0].body).to.match(new RegExp(`^Heartbeat ${nightly.id} of Jobs expects a ping every 60 s`));

    // The hourly job pings again: its own "missing" lapses; the nightly one is still missing.
    await request(f.server).get(`/api/servermonitor/ping/${hourly.token}`).expect(200);
    expect((await alerts()).map((a) => [a.heartbeat_id, a.state])).to.deep.equal([
      [nightly.id, 'unheard'],
      [hourly.id, 'lapsed'],
    ]);

    // An administrator appears: the nightly job's outage, which lasts, is told to them.
    await user(f.engine, org, { email: 'jobs@acme.test' });
    await f.engine.contexts.get('server-monitor')!.container.resolve(AlertService).tellUnheard();
    await waitFor(() => sink.to('jobs@acme.test').length === 1, 10_000);
    const told = await sink.to('jobs@acme.test')[0].parse();
    expect(told.subject).to.equal('Heartbeat missing: Jobs');
    expect(told.text).to.match(new RegExp(`^Heartbeat ${nightly.id} of Jobs expects`));
  });

  it('raises no alert for a ping of a paused server: its heartbeat is back, the missing not told yet lapses', async () => {
    const org = await organization(f.engine, { plan: 'free', admin: 'paused@acme.test' });
    const backup = await addServer(f.engine, org, 'https://paused-backup.test/', { title: 'Paused backup' });
    const beat = await heartbeats().create(backup, 60);
    clock.advance(121_000);
    await f.call('/check/heartbeats').expect(200);
    await waitFor(() => sink.to('paused@acme.test').length === 1, 10_000);
    // Another outage whose "missing" is not sent yet (written, its job not run), then maintenance.
    await request(f.server).get(`/api/servermonitor/ping/${beat.token}`).expect(200);
    await waitFor(() => sink.to('paused@acme.test').length === 2, 10_000);
    await f.engine.knex('monitor_heartbeats').where({ id: beat.id }).update({ state: 'down' });
    await f.engine.knex('monitor_alerts').insert({
      organization_id: org,
      server_id: backup,
      heartbeat_id: beat.id,
      kind: 'heartbeat-missing',
      channel: 'email',
      recipient: 'paused@acme.test',
      subject: 'Heartbeat missing: Paused backup',
      body: '',
      state: 'pending',
      created_at: clock.now(),
    });
    await f.engine.knex('monitor_servers').where({ id: backup }).update({ state: 'paused' });

    await request(f.server).get(`/api/servermonitor/ping/${beat.token}`).expect(200);
    expect((await f.engine.knex('monitor_heartbeats').where({ id: beat.id }).first('state')).state).to.equal('up');
    expect(
      await f.engine.knex('monitor_alerts').where({ server_id: backup }).orderBy('id').pluck('state'),
    ).to.deep.equal(['sent', 'sent', 'lapsed']);
    expect(await subjects('paused@acme.test')).to.deep.equal([
      'Heartbeat missing: Paused backup',
      'Heartbeat back: Paused backup',
    ]);
  });
});
