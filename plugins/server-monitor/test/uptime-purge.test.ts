import { expect } from 'chai';
import type { Knex } from 'knex';
import { describeEachBackend, ManualClock, waitFor } from '@switchboard/core/testing';
import { addServer, monitorFixture, MonitorFixture, organization } from './support';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Check results of a server, `ups` of them up, at the given ages. */
async function results(knex: Knex, serverId: number, now: Date, ages: number[], ups = ages.length) {
  const rows = ages.map((age, i) => ({
    server_id: serverId,
    checked_at: new Date(now.getTime() - age),
    up: i < ups,
    status: i < ups ? '200' : '503',
  }));
  for (let i = 0; i < rows.length; i += 400) await knex('monitor_check_results').insert(rows.slice(i, i + 400));
}

describeEachBackend('server-monitor: uptime and purge', (backend) => {
  let f: MonitorFixture;
  const clock = new ManualClock(new Date('2026-05-10T12:00:00Z'));
  before(async () => {
    f = await monitorFixture(backend(), { clock });
    f.engine.startWorkers();
  });
  after(async () => f?.close());
  const count = async (table: string, where: Record<string, unknown>) =>
    Number((await f.engine.knex(table).where(where).count({ n: '*' }))[0].n);

  it('recomputes 24 h / 7 d / 30 d uptime of one server, of all, and of those marked', async () => {
    const org = await organization(f.engine, { plan: 'pro' });
    const web = await addServer(f.engine, org, 'https://web.test/', { title: 'Web', uptime_stale: false });
    const api = await addServer(f.engine, org, 'https://api.test/', { title: 'API', uptime_stale: false });
    const now = clock.now();
    // Web: 4 results in the last day (3 up), 6 more within the week (all down), 10 more within the month (up).
    await results(f.engine.knex, web, now, [HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR], 3);
    await results(
      f.engine.knex,
      web,
      now,
      [2, 3, 4, 5, 6, 6.5].map((d) => d * DAY),
      0,
    );
    await results(
      f.engine.knex,
      web,
      now,
      Array.from({ length: 10 }, (_, i) => (10 + i) * DAY),
    );
    await results(f.engine.knex, api, now, [HOUR, 40 * DAY]);

    const one = (await f.call(`/calculate/server/${web}`).expect(200)).body;
    expect(one).to.deep.equal({ success: true, message: `Uptime recalculation queued for server "Web" (ID ${web})` });
    await waitFor(
      async () => (await f.engine.knex('monitor_servers').where({ id: web }).first()).uptime_at !== null,
      10_000,
    );
    const figures = await f.engine
      .knex('monitor_servers')
      .where({ id: web })
      .first('uptime_24h', 'uptime_7d', 'uptime_30d');
    expect([figures.uptime_24h, figures.uptime_7d, figures.uptime_30d].map(Number)).to.deep.equal([75, 30, 65]);
    expect((await f.engine.knex('monitor_servers').where({ id: api }).first()).uptime_at).to.equal(null);

    expect((await f.call('/calculate/server/999999').expect(404)).body).to.deep.equal({
      success: false,
      message: 'Server with ID 999999 not found',
    });
    expect((await f.call('/calculate/server/abc').expect(400)).body.success).to.equal(false);

    const all = (await f.call('/calculate/all').expect(200)).body;
    expect(all.message).to.match(/^Uptime recalculation queued for all \d+ servers$/);
    await waitFor(async () => (await count('monitor_servers', { uptime_stale: true })) === 0, 10_000);
    const apiFigures = await f.engine.knex('monitor_servers').where({ id: api }).first('uptime_24h', 'uptime_30d');
    expect(Number(apiFigures.uptime_24h)).to.equal(100);
    expect(Number(apiFigures.uptime_30d)).to.equal(100);

    await f.engine.knex('monitor_servers').where({ id: api }).update({ uptime_stale: true });
    expect((await f.call('/calculate').expect(200)).body.message).to.equal(
      'Uptime recalculation queued for 1 servers marked as needing it',
    );
    await waitFor(async () => (await count('monitor_servers', { uptime_stale: true })) === 0, 10_000);
  });

  it('purges logs and results beyond each plan retention in batches, for all or one organization', async () => {
    const free = await organization(f.engine, { plan: 'free' });
    const pro = await organization(f.engine, { plan: 'pro' });
    const a = await addServer(f.engine, free, 'https://a.test/');
    const b = await addServer(f.engine, pro, 'https://b.test/');
    const now = clock.now();
    await results(
      f.engine.knex,
      a,
      now,
      Array.from({ length: 2_500 }, () => 8 * DAY),
    );
    await results(f.engine.knex, a, now, [DAY, 2 * DAY]);
    await results(f.engine.knex, b, now, [8 * DAY, 100 * DAY]);
    const log = (server: number, age: number) =>
      f.engine.knex('monitor_logs').insert({
        server_id: server,
        original_status: '200',
        updated_status: '503',
        note: 'n',
        created_at: new Date(now.getTime() - age),
      });
    await log(a, 8 * DAY);
    await log(a, DAY);
    await log(b, 8 * DAY);

    const one = (await f.call(`/purge-logs/organization/${pro}`).expect(200)).body;
    expect(one.output).to.match(/^Deleted 0 log entries and 1 check results of 1 organizations/);
    expect(await count('monitor_check_results', { server_id: a })).to.equal(2_502);

    const all = (await f.call('/purge-logs').expect(200)).body;
    expect(all.message).to.equal('Logs purged');
    expect(all.output).to.contain('Deleted 1 log entries and 2500 check results');
    expect(all.output).to.contain('retention: free 7 d, basic 30 d, pro 90 d, enterprise 365 d');
    expect(await count('monitor_check_results', { server_id: a })).to.equal(2);
    expect(await count('monitor_check_results', { server_id: b })).to.equal(1);
    expect(await count('monitor_logs', { server_id: a })).to.equal(1);
    expect(await count('monitor_logs', { server_id: b })).to.equal(1);

    expect((await f.call('/purge-logs/organization/999999').expect(404)).body.message).to.equal(
      'Organization with ID 999999 not found',
    );
  });
});
