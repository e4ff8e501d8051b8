import { expect } from 'chai';
import { describeEachBackend, ManualClock, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { CheckWorker } from '../src/checks';
import { ServersService } from '../src/servers';
import { addServer, monitorFixture, MonitorFixture, organization } from '../src/shared/tests/support';
import { Farm, httpFarm } from '../src/shared/tests/farm';

const DAY = 86_400_000;

/** What a server's edit or removal does to what other features kept of it: its certificate, its alerts. */
describeEachBackend('server-monitor: a server moved or removed', (backend) => {
  let f: MonitorFixture;
  let farm: Farm;
  let sink: SmtpSink;
  const clock = new ManualClock(new Date());
  before(async () => {
    farm = await httpFarm({ certificateDays: 5 });
    clock.set(new Date());
    sink = await smtpSink();
    f = await monitorFixture(backend(), { clock, env: { SMTP_URL: sink.url } });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await Promise.all([farm?.close(), sink?.close()]);
  });

  const container = () => f.engine.contexts.get('server-monitor')!.container;
  const servers = () => container().resolve(ServersService);

  it('a new endpoint is another certificate: its state starts over and its expiry alerts again', async () => {
    const org = await organization(f.engine, { plan: 'basic', admin: 'moved@acme.test' });
    const server = await addServer(f.engine, org, `${farm.httpsUrl}/status/200`, { title: 'Moved' });
    clock.advance(10 * DAY);
    expect((await f.call('/check/ssl').expect(200)).body).to.include({ checked: 1, expired: 1 });
    await waitFor(() => sink.to('moved@acme.test').length === 1, 10_000);
    await servers().update(org, server, { endpoint: `${farm.httpsUrl}/status/200?moved=1` });
    expect(await f.engine.knex('monitor_certificates').where({ server_id: server }).first()).to.equal(undefined);
    expect((await f.call('/check/ssl').expect(200)).body).to.include({ checked: 1, expired: 1 });
    await waitFor(() => sink.to('moved@acme.test').length === 2, 10_000);
    expect((await sink.to('moved@acme.test')[1].parse()).subject).to.equal('SSL certificate expired: Moved');
  });

  it('lets an alert nobody heard lapse when its server is removed', async () => {
    const org = await organization(f.engine, { plan: 'pro' });
    const server = await addServer(f.engine, org, `${farm.url}/status/503`, { title: 'Ghost' });
    await container().resolve(CheckWorker).run(server);
    const states = () => f.engine.knex('monitor_alerts').where({ server_id: server }).pluck('state');
    expect(await states()).to.deep.equal(['unheard']);
    await servers().removeAny(server);
    expect(await states()).to.deep.equal(['lapsed']);
  });
});
