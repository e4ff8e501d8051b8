import { expect } from 'chai';
import request from 'supertest';
import { createTestEngine, describeEachBackend } from '../src/testing';
import type { Engine } from '../src';
import { probePlugin } from './support/probe-plugin';

describeEachBackend('who may read /metrics', (backend) => {
  const engines: Engine[] = [];
  const metricsApp = async (env: Record<string, string>) => {
    const engine = await createTestEngine(backend(), { plugins: [probePlugin], env });
    engines.push(engine);
    return engine.http().callback();
  };
  after(async () => {
    for (const engine of engines) await engine.close();
  });

  it('serves /metrics to anyone by default with APP_ENV=local', async () => {
    const app = await metricsApp({});
    const res = await request(app).get('/metrics').expect(200);
    expect(res.text).to.contain('switchboard_http_requests_total');
  });

  it('serves /metrics in staging and production only once METRICS_TOKEN or METRICS_ALLOW is set', async () => {
    const deployed = { APP_KEY: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=' };
    for (const appEnv of ['staging', 'production']) {
      const closed = await request(await metricsApp({ ...deployed, APP_ENV: appEnv }))
        .get('/metrics')
        .expect(403);
      expect(closed.body.error).to.deep.include({
        code: 'AUTH_INSUFFICIENT_PERMISSIONS',
        message: `Metrics are not served with APP_ENV=${appEnv} until METRICS_TOKEN or METRICS_ALLOW is set`,
      });
    }
    const withToken = await metricsApp({ ...deployed, APP_ENV: 'production', METRICS_TOKEN: 'scrape-secret' });
    await request(withToken).get('/metrics').set('Authorization', 'Bearer scrape-secret').expect(200);
    await request(withToken).get('/metrics').expect(401);
    const allowed = await metricsApp({ ...deployed, APP_ENV: 'production', METRICS_ALLOW: '127.0.0.0/8,::1' });
    await request(allowed).get('/metrics').expect(200);
    await request(allowed).get('/health').expect(200);
  });

  it('asks for the bearer token METRICS_TOKEN names: 401 in the error envelope without it', async () => {
    const app = await metricsApp({ METRICS_TOKEN: 'scrape-secret' });
    for (const auth of [undefined, 'Bearer wrong', 'Bearer scrape-secret-and-more', 'Basic scrape-secret']) {
      const req = request(app).get('/metrics');
      const res = await (auth ? req.set('Authorization', auth) : req).expect(401);
      expect(res.body.success, String(auth)).to.equal(false);
      expect(res.body.error.code).to.equal('AUTH_INVALID_TOKEN');
      expect(res.headers['www-authenticate']).to.equal('Bearer');
    }
    await request(app).get('/metrics').set('Authorization', 'Bearer scrape-secret').expect(200);
    await request(app).get('/health').expect(200);
  });

  it('serves only the addresses METRICS_ALLOW names: 403 in the error envelope elsewhere', async () => {
    const refused = await request(await metricsApp({ METRICS_ALLOW: '192.0.2.0/24, 2001:db8::/32' }))
      .get('/metrics')
      .expect(403);
    expect(refused.body.error.code).to.equal('AUTH_INSUFFICIENT_PERMISSIONS');
    await request(await metricsApp({ METRICS_ALLOW: '192.0.2.0/24,127.0.0.0/8,::1' }))
      .get('/metrics')
      .expect(200);
  });

  it('needs both when both are set', async () => {
    const inside = await metricsApp({ METRICS_ALLOW: '127.0.0.1,::1', METRICS_TOKEN: 'scrape-secret' });
    await request(inside).get('/metrics').expect(401);
    await request(inside).get('/metrics').set('Authorization', 'Bearer scrape-secret').expect(200);
    const outside = await metricsApp({ METRICS_ALLOW: '192.0.2.1', METRICS_TOKEN: 'scrape-secret' });
    await request(outside).get('/metrics').set('Authorization', 'Bearer scrape-secret').expect(403);
  });

  it('stops start-up on an address list it cannot read, naming METRICS_ALLOW', async () => {
    const engine = await createTestEngine(backend(), {
      plugins: [probePlugin],
      env: { METRICS_ALLOW: '10.0.0.0/8,nope' },
    });
    engines.push(engine);
    expect(() => engine.http()).to.throw(/METRICS_ALLOW: "nope" is not an IP address or CIDR range/);
  });
});
