import { expect } from 'chai';
import request from 'supertest';
import {
  embeddedBackend,
  proxiedTestRedis,
  ManualClock,
  smtpSink,
  SmtpSink,
  TestBackend,
  waitFor,
} from '@switchboard/core/testing';
import { HeartbeatService } from '../service';
import { addServer, monitorFixture, MonitorFixture, organization } from '../../shared/tests/support';

/**
 * Heartbeats while Redis stalls (session 36): a ping that brings a heartbeat back is recorded and answered
 * (its alert is a pending row, queued later), and a keyed route whose lock Redis does not answer says 503,
 * not the spec's 500 of a failed operation.
 */
describe('server-monitor: heartbeats while Redis stalls [redis]', () => {
  let backend: TestBackend;
  let proxy: Awaited<ReturnType<typeof proxiedTestRedis>>['proxy'];
  let sink: SmtpSink;
  let f: MonitorFixture;
  const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
  before(async function () {
    this.timeout(60_000);
    const redis = await proxiedTestRedis();
    proxy = redis.proxy;
    backend = embeddedBackend();
    sink = await smtpSink();
    f = await monitorFixture(backend, { clock, env: { SMTP_URL: sink.url, REDIS_URL: redis.url } });
    f.engine.startWorkers();
  });
  after(async function () {
    this.timeout(30_000);
    await proxy?.close();
    await f?.close();
    await sink?.close();
    await backend?.dispose();
  });

  it('answers a ping that brings a heartbeat back, and a locked route 503', async () => {
    const org = await organization(f.engine, { plan: 'free', admin: 'stall@acme.test' });
    const server = await addServer(f.engine, org, 'https://cron.test/', { title: 'Cron' });
    const heartbeats = f.engine.contexts.get('server-monitor')!.container.resolve(HeartbeatService);
    const beat = await heartbeats.create(server, 60);
    clock.advance(121_000);
    // Missing, alerted: the alert queue's connection is open before Redis freezes.
    expect((await f.call('/check/heartbeats').expect(200)).body).to.include({ missing: 1 });
    await waitFor(() => sink.to('stall@acme.test').length === 1, 10_000);
    proxy.blackHole({ later: true });

    const started = Date.now();
    await request(f.server).get(`/api/servermonitor/ping/${beat.token}`).expect(200);
    expect(Date.now() - started).to.be.below(15_000);
    expect((await f.engine.knex('monitor_heartbeats').where({ id: beat.id }).first('state')).state).to.equal('up');
    const back = await f.engine.knex('monitor_alerts').where({ kind: 'heartbeat-back' }).first('state');
    expect(back.state).to.equal('pending');

    const locked = await f.call('/check/heartbeats').expect(503);
    expect(locked.headers['retry-after']).to.equal('2');
    expect(JSON.stringify(locked.body)).to.contain('Redis cannot be reached');
  }).timeout(60_000);
});
