import { expect } from 'chai';
import { describeEachBackend, ManualClock } from '@switchboard/core/testing';
import {
  addServer,
  checkResults,
  monitorFixture,
  MonitorFixture,
  organization,
  rowCount,
} from '../../shared/tests/support';

const DAY = 86_400_000;

describeEachBackend('server-monitor: purge', (backend) => {
  let f: MonitorFixture;
  const clock = new ManualClock(new Date('2026-05-10T12:00:00Z'));
  before(async () => {
    f = await monitorFixture(backend(), { clock });
    f.engine.startWorkers();
  });
  after(async () => f?.close());
  const count = (table: string, where: Record<string, unknown>) => rowCount(f.engine.knex, table, where);

  it('purges logs and results beyond each plan retention in batches, for all or one organization', async () => {
    const free = await organization(f.engine, { plan: 'free' });
    const pro = await organization(f.engine, { plan: 'pro' });
    const a = await addServer(f.engine, free, 'https://a.test/');
    const b = await addServer(f.engine, pro, 'https://b.test/');
    const now = clock.now();
    await checkResults(
      f.engine.knex,
      a,
      now,
      Array.from({ length: 2_500 }, () => 8 * DAY),
    );
    await checkResults(f.engine.knex, a, now, [DAY, 2 * DAY]);
    await checkResults(f.engine.knex, b, now, [8 * DAY, 100 * DAY]);
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
