import { expect } from 'chai';
import { describeEachBackend, ManualClock, waitFor } from '@switchboard/core/testing';
import {
  addServer,
  checkResults,
  monitorFixture,
  MonitorFixture,
  organization,
  rowCount,
} from '../../shared/tests/support';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describeEachBackend('server-monitor: uptime', (backend) => {
  let f: MonitorFixture;
  const clock = new ManualClock(new Date('2026-05-10T12:00:00Z'));
  before(async () => {
    f = await monitorFixture(backend(), { clock });
    f.engine.startWorkers();
  });
  after(async () => f?.close());
  const count = (table: string, where: Record<string, unknown>) => rowCount(f.engine.knex, table, where);

  it('recomputes 24 h / 7 d / 30 d uptime of one server, of all, and of those marked', async () => {
    const org = await organization(f.engine, { plan: 'pro' });
    const web = await addServer(f.engine, org, 'https://web.test/', { title: 'Web', uptime_stale: false });
    const api = await addServer(f.engine, org, 'https://api.test/', { title: 'API', uptime_stale: false });
    const now = clock.now();
    // Web: 4 results in the last day (3 up), 6 more within the week (all down), 10 more within the month (up).
    await checkResults(f.engine.knex, web, now, [HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR], 3);
    await checkResults(
      f.engine.knex,
      web,
      now,
      [2, 3, 4, 5, 6, 6.5].map((d) => d * DAY),
      0,
    );
    await checkResults(
      f.engine.knex,
      web,
      now,
      Array.from({ length: 10 }, (_, i) => (10 + i) * DAY),
    );
    await checkResults(f.engine.knex, api, now, [HOUR, 40 * DAY]);

    // Leading zeros are the same id.
    await f.call(`/calculate/server/0000000000${web}`).expect(200);
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
    // An integer that can be no server's id is a server that does not exist too (spec §7), not a 400.
    for (const id of ['0', '-1', '99999999999'])
      expect((await f.call(`/calculate/server/${id}`).expect(404)).body.message).to.equal(
        `Server with ID ${id} not found`,
      );
    expect((await f.call('/calculate/server/abc').expect(400)).body).to.deep.equal({
      success: false,
      message: 'The server id must be a positive integer',
    });

    const all = (await f.call('/calculate/all').expect(200)).body;
    expect(all.message).to.match(/^Uptime recalculation queued for all \d+ servers$/);
    // The job claims its servers (stale cleared) before it writes their figures: wait for the figures.
    await waitFor(
      async () => (await f.engine.knex('monitor_servers').where({ id: api }).first()).uptime_at !== null,
      10_000,
    );
    const apiFigures = await f.engine.knex('monitor_servers').where({ id: api }).first('uptime_24h', 'uptime_30d');
    expect(Number(apiFigures.uptime_24h)).to.equal(100);
    expect(Number(apiFigures.uptime_30d)).to.equal(100);

    await f.engine.knex('monitor_servers').where({ id: api }).update({ uptime_stale: true });
    expect((await f.call('/calculate').expect(200)).body.message).to.equal(
      'Uptime recalculation queued for 1 servers marked as needing it',
    );
    await waitFor(async () => (await count('monitor_servers', { uptime_stale: true })) === 0, 10_000);
  });

  it('recomputes once an hour the figures of a server no check marks (paused), until its windows hold no result', async () => {
    const org = await organization(f.engine, { plan: 'pro' });
    const id = await addServer(f.engine, org, 'https://paused.test/', { title: 'Paused', uptime_stale: false });
    await checkResults(
      f.engine.knex,
      id,
      clock.now(),
      [1, 2, 3, 4].map((m) => m * 60_000),
      0,
    );
    const figures = async () => {
      const row = await f.engine.knex('monitor_servers').where({ id }).first('uptime_24h', 'uptime_7d', 'uptime_30d');
      return [row.uptime_24h, row.uptime_7d, row.uptime_30d].map((v) => (v === null ? null : Number(v)));
    };
    // The job clears a server's mark before it writes its figures: wait for both.
    const calculated = async (expected?: Array<number | null>) => {
      const message = (await f.call('/calculate').expect(200)).body.message as string;
      await waitFor(async () => (await count('monitor_servers', { uptime_stale: true })) === 0, 10_000);
      if (expected) await waitFor(async () => JSON.stringify(await figures()) === JSON.stringify(expected), 10_000);
      return message;
    };
    await f.call(`/calculate/server/${id}`).expect(200);
    await waitFor(async () => (await figures())[0] === 0, 10_000);
    await f.engine.knex('monitor_servers').where({ id }).update({ state: 'paused' });

    // Paused for two days: its last day holds no result any more; the week and the month still do.
    clock.advance(2 * DAY);
    await calculated([null, 0, 0]);
    // Past the month: no figure left, and nothing more to recompute (every server here is in that case now).
    clock.advance(31 * DAY);
    await calculated([null, null, null]);
    clock.advance(2 * HOUR);
    expect(await calculated()).to.equal('Uptime recalculation queued for 0 servers marked as needing it');
  });
});
