import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { describeEachBackend, ManualClock, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import {
  addServer,
  monitorFixture,
  MonitorFixture,
  notificationSetting,
  organization,
} from '../../shared/tests/support';
import { Farm, httpFarm, selfSigned } from '../../shared/tests/farm';

const DAY = 86_400_000;

describeEachBackend('server-monitor: SSL certificates', (backend) => {
  let f: MonitorFixture;
  let lasting: Farm;
  let ending: Farm;
  let sink: SmtpSink;
  const clock = new ManualClock(new Date());
  before(async () => {
    [lasting, ending] = [await httpFarm({ certificateDays: 60 }), await httpFarm({ certificateDays: 5 })];
    // The certificates start now: so does the test's time.
    clock.set(new Date());
    sink = await smtpSink();
    f = await monitorFixture(backend(), { clock, env: { SMTP_URL: sink.url } });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await Promise.all([lasting?.close(), ending?.close(), sink?.close()]);
  });

  it('reads self-signed certificates, counts what expires within the threshold or has expired, alerts once each', async () => {
    const org = await organization(f.engine, { plan: 'basic', admin: 'certs@acme.test' });
    const a = await addServer(f.engine, org, `${lasting.httpsUrl}/status/200`, { title: 'Lasting' });
    const b = await addServer(f.engine, org, `${ending.httpsUrl}/status/200`, { title: 'Ending' });
    await addServer(f.engine, org, `${lasting.url}/status/200`, { title: 'Plain http' });
    const dead = await addServer(f.engine, org, 'https://127.0.0.1:9/', { title: 'Dead' });

    expect((await f.call('/check/ssl').expect(200)).body).to.deep.equal({
      success: true,
      message: 'SSL certificates checked',
      checked: 3,
      expiring_soon: 1,
      expired: 0,
    });
    const cert = await f.engine.knex('monitor_certificates').where({ server_id: b }).first();
    expect(cert.issuer).to.equal('localhost');
    expect(new Date(cert.valid_to).getTime() - clock.now().getTime()).to.be.within(4.9 * DAY, 5 * DAY);
    expect((await f.engine.knex('monitor_certificates').where({ server_id: dead }).first()).error).to.be.a('string');
    await waitFor(() => sink.to('certs@acme.test').length === 1, 10_000);
    expect((await sink.to('certs@acme.test')[0].parse()).subject).to.equal('SSL certificate expiring: Ending');

    // The next day: the same threshold alerts nobody again.
    clock.advance(DAY);
    expect((await f.call('/check/ssl').expect(200)).body).to.include({ checked: 3, expiring_soon: 1, expired: 0 });
    // Past both expiries: each expired certificate alerts once.
    clock.advance(70 * DAY);
    expect((await f.call('/check/ssl').expect(200)).body).to.include({ checked: 3, expiring_soon: 0, expired: 2 });
    await waitFor(() => sink.to('certs@acme.test').length === 3, 10_000);
    const subjects = await Promise.all(sink.to('certs@acme.test').map(async (m) => (await m.parse()).subject));
    expect(subjects.slice(1).sort()).to.deep.equal([
      'SSL certificate expired: Ending',
      'SSL certificate expired: Lasting',
    ]);
    expect((await f.engine.knex('monitor_certificates').where({ server_id: a }).first()).alerted).to.equal('expired');
  });

  it('answers within its time budget and leaves the rest to a worker', async () => {
    const quick = await monitorFixture(backend(), {
      plugin: { ssl: { budgetMs: 1, concurrency: 2, timeoutMs: 2_000 } },
    });
    try {
      quick.engine.startWorkers();
      const org = await organization(quick.engine, { plan: 'free' });
      await quick.engine.knex('monitor_certificates').delete();
      const ids: number[] = [];
      for (let i = 0; i < 30; i++)
        ids.push(await addServer(quick.engine, org, `${lasting.httpsUrl}/slow/${i % 2 ? 50 : 0}`));
      const started = Date.now();
      const run = (await quick.call('/check/ssl').expect(200)).body;
      expect(Date.now() - started).to.be.below(3_000);
      expect(run.checked).to.be.at.most(2);
      expect(run.message).to.contain('the rest are being checked by a worker');
      await waitFor(
        async () =>
          Number((await quick.engine.knex('monitor_certificates').whereIn('server_id', ids).count({ n: '*' }))[0].n) ===
          30,
        20_000,
      );
    } finally {
      await quick.close();
    }
  });

  it("judges expiry by each organization's own threshold, alerting its administrators", async () => {
    // Only this test's organizations are active, so the counts are of its servers.
    await f.engine.knex('organizations').update({ subscription_status: 'inactive' });
    clock.set(new Date());
    const wide = await organization(f.engine, { plan: 'pro', admin: 'wide@acme.test' });
    const narrow = await organization(f.engine, { plan: 'free', admin: 'narrow@acme.test' });
    // Settings that only set the threshold: administrators are alerted as without a setting, by e-mail.
    await notificationSetting(f.engine, wide, { sslExpiryDays: 90 });
    await notificationSetting(f.engine, narrow, { sslExpiryDays: 3 });
    await addServer(f.engine, wide, `${lasting.httpsUrl}/status/200`, { title: 'Sixty days' });
    const five = await addServer(f.engine, narrow, `${ending.httpsUrl}/status/200`, { title: 'Five days' });

    expect((await f.call('/check/ssl').expect(200)).body).to.include({ checked: 2, expiring_soon: 1, expired: 0 });
    await waitFor(() => sink.to('wide@acme.test').length === 1, 10_000);
    expect((await sink.to('wide@acme.test')[0].parse()).subject).to.equal('SSL certificate expiring: Sixty days');
    expect((await f.engine.knex('monitor_certificates').where({ server_id: five }).first()).alerted).to.equal(null);

    clock.advance(2.5 * DAY);
    expect((await f.call('/check/ssl').expect(200)).body).to.include({ checked: 2, expiring_soon: 2, expired: 0 });
    await waitFor(() => sink.to('narrow@acme.test').length === 1, 10_000);
    expect((await sink.to('narrow@acme.test')[0].parse()).subject).to.equal('SSL certificate expiring: Five days');
    expect(sink.to('wide@acme.test')).to.have.length(1);
  });
  it('starts over with a renewed certificate: one renewed after it expired alerts as it nears its end and expires', async () => {
    await f.engine.knex('organizations').update({ subscription_status: 'inactive' });
    clock.set(new Date());
    const server = tls.createServer(selfSigned(5), (socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const org = await organization(f.engine, { plan: 'basic', admin: 'renewed@acme.test' });
      const { port } = server.address() as AddressInfo;
      const id = await addServer(f.engine, org, `https://localhost:${port}/`, { title: 'Renewed' });
      const subjects = () =>
        Promise.all(sink.to('renewed@acme.test').map(async (m) => (await m.parse()).subject as string));
      const alerted = async () =>
        (await f.engine.knex('monitor_certificates').where({ server_id: id }).first('alerted')).alerted;

      expect((await f.call('/check/ssl').expect(200)).body).to.include({ checked: 1, expiring_soon: 1 });
      // Renewed before its end with one still within the threshold (a short-lived certificate): no new alert.
      server.setSecureContext(selfSigned(8));
      expect((await f.call('/check/ssl').expect(200)).body).to.include({ checked: 1, expiring_soon: 1 });
      expect(await f.engine.knex('monitor_alerts').where({ server_id: id }).pluck('kind')).to.have.length(1);
      clock.advance(9 * DAY);
      expect((await f.call('/check/ssl').expect(200)).body).to.include({ checked: 1, expired: 1 });
      await waitFor(async () => (await subjects()).length === 2, 10_000);
      // Renewed after it expired, ending 10 days from the test's now (19 from the real clock's), within the threshold.
      server.setSecureContext(selfSigned(19));
      expect((await f.call('/check/ssl').expect(200)).body).to.include({ checked: 1, expiring_soon: 1 });
      expect(await alerted()).to.equal('soon');
      clock.advance(11 * DAY);
      expect((await f.call('/check/ssl').expect(200)).body).to.include({ checked: 1, expired: 1 });
      expect(await alerted()).to.equal('expired');
      // The same certificate read again, and an older one served again (a balancer's other node), alert nobody.
      server.setSecureContext(selfSigned(5));
      await f.call('/check/ssl').expect(200);
      expect(await f.engine.knex('monitor_alerts').where({ server_id: id }).pluck('kind')).to.have.length(4);
      await waitFor(async () => (await subjects()).length === 4, 10_000);
      expect(await subjects()).to.deep.equal([
        'SSL certificate expiring: Renewed',
        'SSL certificate expired: Renewed',
        'SSL certificate expiring: Renewed',
        'SSL certificate expired: Renewed',
      ]);
    } finally {
      server.close();
    }
  });
});
