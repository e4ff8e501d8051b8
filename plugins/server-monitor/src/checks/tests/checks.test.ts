import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { JobQueues, Locks, SERVICES } from '@switchboard/core';
import { describeEachBackend, ManualClock, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { CheckWorker } from '../check-worker';
import { CheckDispatcher } from '../dispatcher';
import { addServer, monitorFixture, MonitorFixture, organization } from '../../shared/tests/support';
import { Farm, httpFarm } from '../../shared/tests/farm';

describeEachBackend('server-monitor: checks', (backend) => {
  let f: MonitorFixture;
  let farm: Farm;
  let sink: SmtpSink;
  const clock = new ManualClock(new Date());
  before(async () => {
    farm = await httpFarm();
    sink = await smtpSink();
    f = await monitorFixture(backend(), { clock, env: { SMTP_URL: sink.url } });
  });
  after(async () => {
    await f?.close();
    await farm?.close();
    await sink?.close();
  });

  const server = (id: number) => f.engine.knex('monitor_servers').where({ id }).first();

  it('refuses a wrong, absent or (in production) unset key with 403 Invalid API key, an unknown type with 400', async () => {
    const denied = { success: false, message: 'Invalid API key' };
    expect((await f.call('/check/premium', 'wrong-key').expect(403)).body).to.deep.equal(denied);
    expect((await f.call('/check', 'premium').expect(403)).body).to.deep.equal(denied);
    expect((await f.call('/worker-status', '').expect(403)).body).to.deep.equal(denied);
    const bad = await f.call('/check/weekly').expect(400);
    expect(bad.body.success).to.equal(false);
    expect(bad.body.message).to.contain('all, premium or free');
    expect((await f.call('/no/such/route').expect(404)).body.success).to.equal(false);

    // Unset with APP_ENV=local, a key is generated (shared/tests/key.test.ts).
    const unset = await monitorFixture(backend(), { env: { SERVER_MONITOR_API_KEY: '', APP_ENV: 'production' } });
    try {
      expect((await unset.call('/check/all', '').expect(403)).body).to.deep.equal(denied);
      expect((await unset.call('/check/all').expect(403)).body).to.deep.equal(denied);
    } finally {
      await unset.close();
    }
  });

  it('answers 402 without an active subscription of the plans, 404 without servers', async () => {
    await organization(f.engine, { plan: 'free', subscription: 'inactive' });
    expect((await f.call('/check/free').expect(402)).body).to.deep.equal({
      success: false,
      message: 'No active subscriptions found',
    });
    await organization(f.engine, { plan: 'free' });
    expect((await f.call('/check/free').expect(404)).body).to.deep.equal({
      success: false,
      message: 'No servers found for active subscriptions',
    });
  });

  it('checks every premium server for real, logs status changes, alerts a confirmed outage once', async () => {
    const org = await organization(f.engine, { plan: 'pro', admin: 'ops@acme.test' });
    const idle = await organization(f.engine, { plan: 'enterprise', subscription: 'inactive' });
    const ok = await addServer(f.engine, org, `${farm.url}/status/200`);
    const failing = await addServer(f.engine, org, `${farm.url}/switch/a`);
    const moved = await addServer(f.engine, org, `${farm.url}/redirect`, { status: null });
    const selfSigned = await addServer(f.engine, org, `${farm.httpsUrl}/status/204`);
    const unreachable = await addServer(f.engine, org, 'http://127.0.0.1:9/', { title: 'Nobody home' });
    const notChecked = await addServer(f.engine, idle, `${farm.url}/status/200`);
    farm.set('a', 503);
    f.engine.startWorkers();

    const first = (await f.call('/check/premium').expect(200)).body;
    expect(first).to.deep.equal({
      success: true,
      message: 'Server checks queued for premium servers',
      output: 'Dispatched 5 server checks (5 new servers)',
    });
    await waitFor(async () => (await f.engine.knex('monitor_check_results').count({ n: '*' }))[0].n == 5, 15_000);
    expect(await server(ok)).to.include({ status: '200' });
    expect(await server(failing)).to.include({ status: '503' });
    expect(await server(moved)).to.include({ status: '200' });
    expect(await server(selfSigned)).to.include({ status: '204' });
    expect(await server(unreachable)).to.include({ status: 'unreachable' });
    expect((await server(notChecked)).last_checked_at).to.equal(null);
    // A new failure is tried twice before it counts; an answer once.
    expect(farm.hits.get('/switch/a')).to.equal(2);
    expect(farm.hits.get('/status/204')).to.equal(1);

    const logs = await f.engine.knex('monitor_logs').where({ server_id: failing }).select();
    expect(logs).to.have.length(1);
    expect(logs[0]).to.include({ original_status: '200', updated_status: '503' });
    expect(logs[0].note).to.contain('answered 503');
    expect(await f.engine.knex('monitor_logs').where({ server_id: ok }).count({ n: '*' })).to.deep.equal([{ n: 0 }]);

    await waitFor(() => sink.to('ops@acme.test').length === 2, 10_000);
    const subjects = await Promise.all(sink.to('ops@acme.test').map(async (m) => (await m.parse()).subject));
    expect(subjects.sort()).to.deep.equal([`DOWN: Nobody home`, `DOWN: Server ${farm.url}/switch/a`]);

    // Within half a minute again: nothing is checked twice.
    clock.advance(20_000);
    const again = (await f.call('/check/premium').expect(200)).body;
    expect(again.output).to.equal(
      'Dispatched 0 server checks (0 new servers); premium servers were dispatched less than half a cadence ago',
    );

    // A minute later the server answers again: a recovery notice, and the outage is over.
    farm.set('a', 200);
    clock.advance(40_000);
    const next = (await f.call('/check/all').expect(200)).body;
    expect(next.output).to.contain('Dispatched 5 server checks (0 new servers)');
    await waitFor(async () => (await f.engine.knex('monitor_check_results').count({ n: '*' }))[0].n == 10, 15_000);
    expect(await server(failing)).to.include({ status: '200' });
    await waitFor(() => sink.to('ops@acme.test').length === 3, 10_000);
    const recovery = await sink.to('ops@acme.test')[2].parse();
    expect(recovery.subject).to.equal(`UP again: Server ${farm.url}/switch/a`);
    // How long it was down, and since when: what the person on call reads first.
    expect(recovery.text).to.match(/is up again: .*, after \d+ min down \(since \d{4}-\d\d-\d\dT[\d:.]+Z\)\./);
    // Still down: no second alert for the same outage.
    expect(farm.hits.get('/switch/a')).to.equal(3);
    expect(await f.engine.knex('monitor_alerts').where({ server_id: unreachable }).count({ n: '*' })).to.deep.equal([
      { n: 1 },
    ]);
  });

  it("runs the scheduler's round after a call by hand between rounds; one racing a call is left alone", async () => {
    const org = await organization(f.engine, { plan: 'free' });
    await addServer(f.engine, org, `${farm.url}/status/200`);
    f.engine.startWorkers();
    const dispatcher = f.engine.contexts.get('server-monitor')!.container.resolve(CheckDispatcher);
    const results = async () => Number((await f.engine.knex('monitor_check_results').count({ n: '*' }))[0].n);
    // A round, a call by hand 2 min 40 s later, the scheduler's next round 2 min 20 s after that: half a
    // cadence after the call, which skipped it as recent (the servers unchecked until the round after).
    for (const [advance, label, dispatch] of [
      [300_000, 'round', () => dispatcher.dispatch('free', { scheduled: true })],
      [160_000, 'by hand', () => dispatcher.dispatch('free')],
      [140_000, 'next round', () => dispatcher.dispatch('free', { scheduled: true })],
    ] as const) {
      clock.advance(advance);
      const before = await results();
      const done = await dispatch();
      expect([label, done.recent, done.dispatched > 0]).to.deep.equal([label, [], true]);
      await waitFor(async () => (await results()) === before + done.dispatched, 15_000);
    }
    // An external cron's call at the same moment as the round: one round.
    clock.advance(300_000);
    expect((await f.call('/check/free').expect(200)).body.output).to.match(/^Dispatched [1-9]/);
    clock.advance(5_000);
    expect((await dispatcher.dispatch('free', { scheduled: true })).recent).to.deep.equal(['free']);
    clock.advance(300_000);
  });

  it('answers an overlapping call at once that a dispatch is running, in any process', async () => {
    const org = await organization(f.engine, { plan: 'enterprise' });
    await addServer(f.engine, org, `${farm.url}/status/200`);
    clock.advance(60_000);
    const held = await f.engine.container
      .resolve<Locks>(SERVICES.Locks)
      .acquire('servermonitor.dispatch.premium', 60_000);
    try {
      expect((await f.call('/check/premium').expect(200)).body).to.deep.equal({
        success: true,
        message: 'A dispatch of premium server checks is already running',
        output: 'Dispatched 0 server checks (0 new servers); a dispatch of premium server checks was already running',
      });
    } finally {
      await held!.release();
    }
    expect((await f.call('/check/premium').expect(200)).body.output).to.match(/^Dispatched [1-9]\d* server checks/);
  });

  it('answers 500 with the detail when checks cannot be queued', async () => {
    const queue = f.engine.container.resolve<JobQueues>(SERVICES.Queues).get('servermonitor.check-free');
    const add = queue.add;
    const org = await organization(f.engine, { plan: 'free' });
    await addServer(f.engine, org, `${farm.url}/status/200`);
    queue.add = () => Promise.reject(new Error('the queue is down'));
    try {
      expect((await f.call('/check/free').expect(500)).body).to.deep.equal({
        success: false,
        message: 'Failed to initiate server check',
        error: 'the queue is down',
      });
    } finally {
      queue.add = add;
    }
  });

  it('counts a check that outlasts its timeout as down, the log note naming the timeout', async () => {
    const quick = await monitorFixture(backend(), { plugin: { checks: { timeoutMs: 200, confirmDelayMs: 0 } } });
    // Run here, not queued: the other engine's workers take jobs from this backend's queues too.
    const worker = quick.engine.contexts.get('server-monitor')!.container.resolve(CheckWorker);
    try {
      const org = await organization(quick.engine, { plan: 'pro', admin: 'slow@acme.test' });
      const sluggish = await addServer(quick.engine, org, `${farm.url}/slow/1999`, { title: 'Sluggish' });
      const started = Date.now();
      expect(await worker.run(sluggish)).to.include({ up: false, status: 'timeout', responseMs: null });
      expect(Date.now() - started, 'two tries of 200 ms, not the 2 s answer').to.be.below(1_500);
      expect(farm.hits.get('/slow/1999')).to.equal(2);

      expect(await server(sluggish)).to.include({ status: 'timeout' });
      expect(Boolean((await server(sluggish)).is_up)).to.equal(false);
      const logs = await f.engine.knex('monitor_logs').where({ server_id: sluggish }).select();
      expect(logs.map((l) => [l.original_status, l.updated_status, l.note])).to.deep.equal([
        ['200', 'timeout', `${farm.url}/slow/1999 failed (timed out after 200 ms)`],
      ]);
      const alerts = await f.engine.knex('monitor_alerts').where({ server_id: sluggish }).select('kind', 'subject');
      expect(alerts).to.deep.equal([{ kind: 'server-down', subject: 'DOWN: Sluggish' }]);
    } finally {
      await worker.checker.close();
      await quick.close();
    }
  });

  it('keeps its connections alive between checks, and closes them when the engine stops', async () => {
    let open = 0;
    let opened = 0;
    const target = http.createServer((_req, res) => res.end('ok'));
    target.on('connection', (socket) => {
      open++;
      opened++;
      socket.on('close', () => open--);
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    try {
      const running = await monitorFixture(backend());
      try {
        await running.engine.startPlugins();
        const org = await organization(running.engine, { plan: 'pro' });
        const id = await addServer(running.engine, org, `http://127.0.0.1:${(target.address() as AddressInfo).port}/`);
        const worker = running.engine.contexts.get('server-monitor')!.container.resolve(CheckWorker);
        expect(await worker.run(id)).to.include({ up: true });
        expect(open, 'kept alive for the next check').to.equal(1);
        expect(await worker.run(id)).to.include({ up: true });
        // Kept alive (a second one may open when the first is not back in the pool yet).
        expect(open, 'still kept alive').to.be.within(1, 2);
        expect(opened).to.be.within(1, 2);
      } finally {
        await running.close();
      }
      // Well within the agent's 10 s keep-alive.
      await waitFor(() => open === 0, 2_000);
    } finally {
      target.closeAllConnections();
      await new Promise((resolve) => target.close(resolve));
    }
  });
});
