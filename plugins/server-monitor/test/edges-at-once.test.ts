import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import type { Knex } from 'knex';
import { apiClient, createTenant, describeEachBackend, smtpSink, SmtpSink } from '@switchboard/core/testing';
import { AlertService } from '../src/alerts';
import { CheckWorker } from '../src/checks';
import { CheckResultWriter } from '../src/checks/result-writer';
import { HeartbeatService } from '../src/heartbeats';
import { ServerImporter } from '../src/import';
import { addServer, monitorFixture, MonitorFixture, organization, rowCount, user } from '../src/shared/tests/support';
import { Farm, httpFarm } from '../src/shared/tests/farm';

/**
 * What happens at the edges of a check, an alert and a heartbeat (a review's findings, session 26): the
 * engine stopping mid-check, a queue failing after a commit, a pause or a ping landing meanwhile, two
 * requests at once, alerts of organizations nobody can hear, odd input.
 */
describeEachBackend('server-monitor: edges of checks, alerts and heartbeats', (backend) => {
  let f: MonitorFixture;
  let farm: Farm;
  let sink: SmtpSink;
  before(async () => {
    farm = await httpFarm();
    sink = await smtpSink();
    f = await monitorFixture(backend(), { env: { SMTP_URL: sink.url } });
  });
  after(async () => {
    await f?.close();
    await Promise.all([farm?.close(), sink?.close()]);
  });

  const container = () => f.engine.contexts.get('server-monitor')!.container;
  const alertsOf = (server: number) => rowCount(f.engine.knex, 'monitor_alerts', { server_id: server });
  const resultsOf = (server: number) => rowCount(f.engine.knex, 'monitor_check_results', { server_id: server });

  it('writes nothing for a check the engine stops in the middle of: a shutdown is no outage', async () => {
    const org = await organization(f.engine, { plan: 'pro', admin: 'stop@edge.test' });
    const server = await addServer(f.engine, org, `${farm.url}/slow/3000`, { is_up: true, state: 'up' });
    // A worker of its own: closing it stands for the engine's stop, without stopping this suite's engine.
    const worker = Object.create(container().resolve(CheckWorker)) as CheckWorker;
    const checker = Object.create(worker.checker) as CheckWorker['checker'];
    Object.defineProperty(worker, 'checker', { value: checker });
    const running = worker.run(server).then(
      () => null,
      (err: Error) => err.message,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await checker.close();
    expect(await running).to.match(/engine is stopping/);
    expect([await resultsOf(server), await alertsOf(server)]).to.deep.equal([0, 0]);
    expect((await f.engine.knex('monitor_servers').where({ id: server }).first('state')).state).to.equal('up');
  });

  it('raises one alert when queueing it fails after the commit (the sweep queues it later)', async () => {
    const org = await organization(f.engine, { plan: 'pro', admin: 'queue@edge.test' });
    farm.set('queue-fails', 503);
    const server = await addServer(f.engine, org, `${farm.url}/switch/queue-fails`, { is_up: false });
    const { queue } = AlertService.prototype;
    AlertService.prototype.queue = async () => {
      throw new Error('queue servermonitor.alert is closed');
    };
    try {
      await container().resolve(CheckWorker).run(server);
    } finally {
      AlertService.prototype.queue = queue;
    }
    expect([await resultsOf(server), await alertsOf(server)]).to.deep.equal([1, 1]);
    const alert = await f.engine.knex('monitor_alerts').where({ server_id: server }).first('state');
    expect(alert.state).to.equal('pending');
  });

  it('raises no alert for a server paused while its check ran, nor for one moved to another endpoint or token', async () => {
    const org = await organization(f.engine, { plan: 'pro', admin: 'pause@edge.test' });
    const paused = await addServer(f.engine, org, `${farm.url}/status/503`, { is_up: true, state: 'up' });
    const moved = await addServer(f.engine, org, `${farm.url}/status/502`, { is_up: true, state: 'up' });
    const snapshot = async (id: number) =>
      f.engine
        .knex('monitor_servers')
        .where({ id })
        .first('id', 'organization_id', 'title', 'endpoint', 'status', 'is_up', 'down_alerted');
    const [before, beforeMoved] = [await snapshot(paused), await snapshot(moved)];
    await f.engine.knex('monitor_servers').where({ id: paused }).update({ state: 'paused' });
    await f.engine
      .knex('monitor_servers')
      .where({ id: moved })
      .update({ endpoint: `${farm.url}/status/200` });
    const down = { up: false, status: '503', responseMs: 5, error: 'answered 503' };
    const writer = container().resolve(CheckResultWriter);
    await Promise.all([writer.write(before, down), writer.write(beforeMoved, down)]);
    expect([await alertsOf(paused), await resultsOf(paused), await alertsOf(moved)]).to.deep.equal([0, 0, 0]);
    const row = await f.engine.knex('monitor_servers').where({ id: paused }).first('state', 'down_alerted');
    expect(row.state).to.equal('paused');
    expect(Boolean(row.down_alerted)).to.equal(false);

    // Its token replaced while the check ran (shown alike, `?token=***`): the check was of the old token.
    const rotated = await addServer(f.engine, org, `${farm.url}/status/401?token=***`, {
      is_up: true,
      state: 'up',
      endpoint_secret: 'sealed-before',
    });
    const checkedWith = await f.engine
      .knex('monitor_servers')
      .where({ id: rotated })
      .first('id', 'organization_id', 'title', 'endpoint', 'endpoint_secret', 'status', 'is_up', 'down_alerted');
    await f.engine.knex('monitor_servers').where({ id: rotated }).update({ endpoint_secret: 'sealed-after' });
    await writer.write(checkedWith, { up: false, status: '401', responseMs: 5, error: 'answered 401' });
    expect([await alertsOf(rotated), await resultsOf(rotated)]).to.deep.equal([0, 0]);
  });

  it('leaves a heartbeat pinged while the missing check runs up, unalerted', async () => {
    const org = await organization(f.engine, { plan: 'pro', admin: 'beat@edge.test' });
    const server = await addServer(f.engine, org, `${farm.url}/status/200`);
    const service = container().resolve(HeartbeatService);
    const beat = await service.create(server, 60);
    await f.engine
      .knex('monitor_heartbeats')
      .where({ id: beat.id })
      .update({ due_at: new Date(Date.now() - 60_000), state: 'up' });
    // The ping lands between the check's read of the due heartbeats and its update of this one.
    let armed = true;
    const knex = f.engine.knex;
    const racing = new Proxy(knex, {
      apply(target, self, args: Parameters<Knex>) {
        const query = Reflect.apply(target, self, args) as Knex.QueryBuilder;
        if (armed && args[0] === 'monitor_servers as s') {
          armed = false;
          const then = query.then.bind(query);
          Object.assign(query, {
            then: (resolve: (rows: unknown) => unknown, reject: (err: unknown) => unknown) =>
              then(async (rows: unknown) => {
                await service.ping(beat.token);
                return rows;
              }).then(resolve, reject),
          });
        }
        return query;
      },
    });
    const checking = Object.create(service) as HeartbeatService;
    Object.defineProperty(checking, 'knex', { value: racing });
    await checking.check();
    expect(armed).to.equal(false);
    const row = await f.engine.knex('monitor_heartbeats').where({ id: beat.id }).first('state');
    expect(row.state).to.equal('up');
    expect(await alertsOf(server)).to.equal(0);
  });

  it('tells an unheard alert though 500 older ones have nobody to tell yet', async () => {
    const quiet = await organization(f.engine, { plan: 'pro' });
    const loud = await organization(f.engine, { plan: 'pro' });
    farm.set('unheard-many', 503);
    const quietServer = await addServer(f.engine, quiet, `${farm.url}/switch/unheard-many`, { state: 'down' });
    const loudServer = await addServer(f.engine, loud, `${farm.url}/switch/unheard-many`, { state: 'down' });
    const unheard = (organization_id: number, server_id: number) => ({
      organization_id,
      server_id,
      kind: 'server-down',
      channel: 'none',
      recipient: '',
      subject: 'DOWN',
      body: 'down',
      state: 'unheard',
      created_at: new Date(),
    });
    const rows = Array.from({ length: 510 }, () => unheard(quiet, quietServer));
    for (let i = 0; i < rows.length; i += 100) await f.engine.knex('monitor_alerts').insert(rows.slice(i, i + 100));
    await f.engine.knex('monitor_alerts').insert(unheard(loud, loudServer));
    await user(f.engine, loud, { email: 'heard@edge.test' });
    const told = await container().resolve(AlertService).tellUnheard();
    expect(told).to.be.at.least(1);
    const loudAlert = await f.engine.knex('monitor_alerts').where({ organization_id: loud, state: 'told' }).first('id');
    expect(loudAlert).to.not.equal(undefined);
  });

  it('creates one server for one endpoint asked twice at once, and tells paths apart by case', async () => {
    const acme = await createTenant(f.engine, { name: `Edge ${Date.now()}`, plan: 'pro' });
    const api = apiClient(f.server, '/api/servermonitor', acme);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => api.post('/servers', { title: 'Dup', endpoint: `${farm.url}/status/200?dup` })),
    );
    expect(answers.map((a) => a.status).sort()).to.deep.equal([201, 409, 409, 409, 409, 409]);
    await api.post('/servers', { title: 'Upper', endpoint: `${farm.url}/Health` }).expect(201);
    await api.post('/servers', { title: 'Lower', endpoint: `${farm.url}/health` }).expect(201);
  });

  it('refuses an import file with a header of other columns and no record, and answers a long ping token 404', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-import-'));
    const file = path.join(dir, 'header-only.csv');
    fs.writeFileSync(file, 'name,url\n');
    const refused = await container()
      .resolve(ServerImporter)
      .import(file)
      .then(
        () => null,
        (err: Error) => err.message,
      );
    const folder = await container()
      .resolve(ServerImporter)
      .import(dir)
      .then(
        () => null,
        (err: Error) => err.message,
      );
    fs.rmSync(dir, { recursive: true, force: true });
    expect(refused).to.match(/header row lacks the column\(s\) title, endpoint, organization_name/);
    expect(folder).to.equal(`${dir} is not a file`);
    const long = await request(f.server)
      .get(`/api/servermonitor/ping/${'a'.repeat(65)}`)
      .expect(404);
    expect(long.body).to.deep.equal({ success: false, message: 'Unknown heartbeat' });
  });
});
