import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend, recordingLogger } from '@switchboard/core/testing';
import { monitorFixture, MonitorFixture } from '../src/shared/tests/support';

/** Issue 26: a path whose last segment is no valid percent-encoding was a 500 and a stack trace per request. */
describeEachBackend('server-monitor: paths with bad percent-encoding', (backend) => {
  let f: MonitorFixture;
  const log = recordingLogger('warn');
  before(async () => {
    f = await monitorFixture(backend(), { logger: log.logger });
  });
  after(async () => {
    await f?.close();
  });

  it('answers 403 Invalid API key, logging nothing at error level', async () => {
    for (const last of ['%', '%ZZ', '%E0%A4%A', '%C0%AF', 'ok%']) {
      const answer = await request(f.server).get(`/api/servermonitor/foo/${last}`).expect(403);
      expect(answer.body, last).to.deep.equal({ success: false, message: 'Invalid API key' });
    }
    expect(log.errors()).to.deep.equal([]);
  });
});
