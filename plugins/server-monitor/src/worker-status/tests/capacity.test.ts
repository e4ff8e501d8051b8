import { expect } from 'chai';
import { describeEachBackend, ManualClock } from '@switchboard/core/testing';
import { CHECK_OPTIONS, CheckOptions } from '../../checks';
import { CapacityService } from '../capacity';
import { addServer, monitorFixture, MonitorFixture, organization } from '../../shared/tests/support';

describeEachBackend('server-monitor: check-capacity', (backend) => {
  let f: MonitorFixture;
  const clock = new ManualClock(new Date('2026-06-01T12:00:30Z'));
  before(async () => {
    f = await monitorFixture(backend(), { clock });
  });
  after(async () => f?.close());

  it('counts a timed-out check at its time limit, and the SLAs met by checks on their cadence', async () => {
    const container = f.engine.contexts.get('server-monitor')!.container;
    const pro = await organization(f.engine, { plan: 'pro' });
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push(await addServer(f.engine, pro, `https://s${i}.capacity.test/`));
    // 20 premium servers need 1/3 of a check a second: 192 checks in the last 10 minutes is 96 % of it,
    // half of them answered in 100 ms, half timed out (no response time).
    const results = Array.from({ length: 192 }, (_, i) => ({
      server_id: ids[i % ids.length],
      checked_at: new Date(clock.now().getTime() - 600_000 + i * 3_000),
      up: i % 2 === 0,
      status: i % 2 === 0 ? '200' : 'timeout',
      response_ms: i % 2 === 0 ? 100 : null,
    }));
    await f.engine.knex('monitor_check_results').insert(results);
    const limit = container.resolve<CheckOptions>(CHECK_OPTIONS).timeoutMs;
    const capacity = await container.resolve(CapacityService).measure();
    expect(capacity).to.include({
      required_checks_per_second: 0.33,
      measured_checks_per_second: 0.32,
      average_response_ms: Math.round((100 + limit) / 2),
      meets_sla: true,
    });
  });

  it('says how many servers were added within the measured window, whose checks it has not all seen', async () => {
    const container = f.engine.contexts.get('server-monitor')!.container;
    const before = (await container.resolve(CapacityService).measure()).servers_added_in_window;
    const pro = await organization(f.engine, { plan: 'pro' });
    await addServer(f.engine, pro, 'https://new.capacity.test/', {
      created_at: new Date(clock.now().getTime() - 60_000),
    });
    await addServer(f.engine, pro, 'https://old.capacity.test/', {
      created_at: new Date(clock.now().getTime() - 3_600_000),
    });
    const capacity = await container.resolve(CapacityService).measure();
    expect(capacity.servers_added_in_window - before, 'the new one, not the old').to.equal(1);
  });
});
