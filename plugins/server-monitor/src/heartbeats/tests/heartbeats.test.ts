import { expect } from 'chai';
import { hashToken } from '@switchboard/core';
import request from 'supertest';
import { describeEachBackend, ManualClock, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { HeartbeatService } from '../service';
import { addServer, monitorFixture, MonitorFixture, organization } from '../../shared/tests/support';

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
});
