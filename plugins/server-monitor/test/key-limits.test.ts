import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend } from '@switchboard/core/testing';
import { HeartbeatService } from '../src/heartbeats';
import { addServer, monitorFixture, MonitorFixture, organization } from '../src/shared/tests/support';

/** The per-address limit of wrong keys (docs/decisions.md, server-monitor, **Key**) across the plugin's routes. */
describeEachBackend('server-monitor: wrong keys are rate limited', (backend) => {
  let f: MonitorFixture;
  before(async function () {
    this.timeout(60_000);
    // The shipped limit (RATE_LIMIT_SCALE 1), on this suite's own backend: no other test's refusals count here.
    f = await monitorFixture(backend(), { env: { RATE_LIMIT_SCALE: '1' } });
  });
  after(async () => {
    await f?.close();
  });
  const denied = { success: false, message: 'Invalid API key' };

  it('answers an address past 20 wrong keys in 10 minutes 429 in its error shape, while the right key, its other answers and pings are never limited', async function () {
    this.timeout(60_000);
    const org = await organization(f.engine, { plan: 'free' });
    const { token } = await f.engine.contexts
      .get('server-monitor')!
      .container.resolve(HeartbeatService)
      .create(await addServer(f.engine, org, 'https://cron.test/'), 60);
    const ping = () => request(f.server).get(`/api/servermonitor/ping/${token}`);

    // The right key's refusals (402: no premium organization) and pings count nothing.
    for (let i = 0; i < 25; i++) {
      const answer = await f.call('/check/premium').expect(402);
      expect(answer.headers).to.not.have.property('x-ratelimit-remaining');
      await ping().expect(200);
    }
    await request(f.server).get('/api/servermonitor/ping/no-such-token').expect(404);
    for (let i = 0; i < 20; i++) {
      // Half of them through the path in capitals, which the router takes too: they count alike.
      const path = i % 2 ? '/worker-status' : '/WORKER-STATUS';
      const refused = await (
        i % 2 ? f.call(path, `wrong-${i}`) : request(f.server).get(`/API/SERVERMONITOR${path}/wrong-${i}`)
      ).expect(403);
      expect(refused.body).to.deep.equal(denied);
      expect(refused.headers['x-ratelimit-limit']).to.equal('20');
      expect(refused.headers['x-ratelimit-remaining']).to.equal(String(19 - i));
    }
    const limited = await f.call('/check/all', 'wrong-20').expect(429);
    expect(limited.body).to.have.keys('success', 'message');
    expect(limited.body.success).to.equal(false);
    expect(limited.body.message).to.match(/^Too many invalid API keys from this address: retry in \d+ s$/);
    expect(Number(limited.headers['retry-after'])).to.be.within(1, 600);
    // A path no route has is refused the same way, in capitals too.
    await request(f.server).get('/api/servermonitor/no/such/route').expect(429);
    await request(f.server).get(`/API/servermonitor/worker-status/wrong-21`).expect(429);

    await f.call('/worker-status').expect(200);
    await f.call('/check/premium').expect(402);
    await ping().expect(200);

    const doc = (await request(f.server).get('/api/openapi.json').expect(200)).body;
    const answers = (p: string) => doc.paths[`/api/servermonitor${p}`].get.responses;
    expect(answers('/worker-status/{key}')['429'].content['application/json'].schema).to.deep.equal(
      answers('/worker-status/{key}')['403'].content['application/json'].schema,
    );
    expect(answers('/check/{type}/{key}')).to.have.property('429');
    expect(answers('/ping/{token}')).to.not.have.property('429');
  });
});
