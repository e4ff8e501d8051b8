import { expect } from 'chai';
import { DatabaseAway, databaseAwayFor, describeEachBackend } from '@switchboard/core/testing';
import { CheckWorker } from '../check-worker';
import { CheckResultWriter } from '../result-writer';
import { addServer, monitorFixture, MonitorFixture, organization } from '../../shared/tests/support';
import { Farm, httpFarm } from '../../shared/tests/farm';

/**
 * A database away for a moment while a round's checks are written (a review's finding, session 27): the
 * result waits for it and is written once it is back. The round's results were lost, every server of it.
 */
describeEachBackend('server-monitor: a database away while a check is written', (backend) => {
  let f: MonitorFixture;
  let farm: Farm;
  before(async () => {
    farm = await httpFarm();
    f = await monitorFixture(backend());
  });
  let away: DatabaseAway | undefined;
  after(async () => {
    away?.restore();
    await f?.close();
    await farm?.close();
  });

  it('writes the result once the database is back', async () => {
    away = databaseAwayFor(CheckResultWriter.prototype, 'write', 2);
    const org = await organization(f.engine, { plan: 'pro' });
    const server = await addServer(f.engine, org, `${farm.url}/status/200`, { title: 'Steady' });
    const worker = f.engine.contexts.get('server-monitor')!.container.resolve(CheckWorker);
    expect(await worker.run(server)).to.include({ up: true });
    away.restore();
    expect(away.refused).to.equal(2);
    const results = await f.engine.knex('monitor_check_results').where({ server_id: server }).pluck('up');
    expect(results.map(Boolean)).to.deep.equal([true]);
  }).timeout(30_000);
});
