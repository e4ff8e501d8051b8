import { expect } from 'chai';
import { Locks, SERVICES } from '@switchboard/core';
import { describeEachBackend } from '@switchboard/core/testing';
import { HeartbeatService } from '../service';
import { addServer, monitorFixture, MonitorFixture, organization } from '../../shared/tests/support';

const DAY = 86_400_000;

describeEachBackend('server-monitor: runs already under way', (backend) => {
  let f: MonitorFixture;
  before(async () => {
    f = await monitorFixture(backend());
  });
  after(async () => f?.close());

  /** Holds the lock another process's run of that operation would hold, while `work` runs. */
  const whileRunning = async (operation: string, work: () => Promise<void>) => {
    const lock = await f.engine.container.resolve<Locks>(SERVICES.Locks).acquire(`servermonitor.${operation}`, 60_000);
    expect(lock, operation).to.not.equal(null);
    try {
      await work();
    } finally {
      await lock!.release();
    }
  };

  it('answers purge, SSL and heartbeat calls at once, doing nothing, while another run holds the lock', async () => {
    const org = await organization(f.engine, { plan: 'free' });
    const server = await addServer(f.engine, org, 'https://127.0.0.1:9/');
    await f.engine.knex('monitor_logs').insert({
      server_id: server,
      original_status: '200',
      updated_status: '503',
      note: 'old',
      created_at: new Date(Date.now() - 30 * DAY),
    });
    const logs = async () => Number((await f.engine.knex('monitor_logs').count({ n: '*' }))[0].n);

    await whileRunning('purge', async () => {
      const busy = { success: true, message: 'A purge is already running' };
      const output = 'Another purge is running; nothing deleted by this call';
      expect((await f.call('/purge-logs').expect(200)).body).to.deep.equal({ ...busy, output });
      expect((await f.call(`/purge-logs/organization/${org}`).expect(200)).body).to.deep.equal({ ...busy, output });
      expect(await logs()).to.equal(1);
    });
    expect((await f.call('/purge-logs').expect(200)).body.message).to.equal('Logs purged');
    expect(await logs()).to.equal(0);

    await whileRunning('ssl', async () => {
      expect((await f.call('/check/ssl').expect(200)).body).to.deep.equal({
        success: true,
        message: 'An SSL check is already running',
        checked: 0,
        expiring_soon: 0,
        expired: 0,
      });
    });
    expect((await f.call('/check/ssl').expect(200)).body).to.include({
      message: 'SSL certificates checked',
      checked: 1,
    });

    const beat = await f.engine.contexts.get('server-monitor')!.container.resolve(HeartbeatService).create(server, 60);
    await f.engine
      .knex('monitor_heartbeats')
      .where({ id: beat.id })
      .update({ due_at: new Date(Date.now() - 1_000) });
    await whileRunning('heartbeats', async () => {
      expect((await f.call('/check/heartbeats').expect(200)).body).to.deep.equal({
        success: true,
        message: 'A heartbeat check is already running',
        missing: 0,
        healthy: 1,
      });
    });
    expect((await f.call('/check/heartbeats').expect(200)).body).to.include({ missing: 1, healthy: 0 });
  });
});
