import { expect } from 'chai';
import request from 'supertest';
import type { Server } from 'node:http';
import { describeEachBackend, createTestEngine, createTenant } from '../src/testing';
import type { Engine } from '../src';
import { probePlugin } from './support/probe-plugin';
import { ApiTokenService } from '../src/auth/api-tokens';

describeEachBackend('rate limits', (backend) => {
  let engine: Engine;
  let server: Server;

  before(async () => {
    engine = await createTestEngine(backend(), { plugins: [probePlugin] });
    server = engine.http().listen(0);
  });
  after(async () => {
    server.close();
    await engine.close();
  });

  it('carries integer X-RateLimit headers and answers 429 with retry_after once a token is over', async () => {
    const tenant = await createTenant(engine);
    const nowSeconds = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 5; i++) {
      const res = await request(server).get('/api/probe/things/1').set(tenant.auth).expect(200);
      expect(res.headers['x-ratelimit-limit']).to.equal('5');
      expect(res.headers['x-ratelimit-remaining']).to.equal(String(4 - i));
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(reset).to.be.within(nowSeconds, nowSeconds + 62);
    }
    const over = await request(server).get('/api/probe/things/1').set(tenant.auth).expect(429);
    expect(over.body.error.code).to.equal('RATE_LIMIT_EXCEEDED');
    expect(over.body.error.retry_after).to.be.a('number').and.satisfy(Number.isInteger).and.be.within(1, 60);
    expect(over.headers['retry-after']).to.equal(String(over.body.error.retry_after));
    expect(over.headers['x-ratelimit-remaining']).to.equal('0');
  });

  it('counts a method limit apart from the overall one and reports the tighter', async () => {
    const tenant = await createTenant(engine);
    const first = await request(server)
      .post('/api/probe/things')
      .set(tenant.auth)
      .send({ email: 'a@b.co' })
      .expect(201);
    expect(first.headers['x-ratelimit-limit']).to.equal('2');
    await request(server).post('/api/probe/things').set(tenant.auth).send({ email: 'a@b.co' }).expect(201);
    await request(server).post('/api/probe/things').set(tenant.auth).send({ email: 'a@b.co' }).expect(429);
    const get = await request(server).get('/api/probe/things/1').set(tenant.auth).expect(200);
    expect(get.headers['x-ratelimit-limit']).to.equal('5');
  });

  it('limits requests without a valid token per client address, before answering 401', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await request(server).get('/api/probe/things/1')).status);
    expect(statuses).to.deep.equal([401, 401, 401, 429]);
  });

  it('gives back the point of a request the engine failed: a client retrying through an outage keeps its allowance', async () => {
    const tenant = await createTenant(engine);
    for (let i = 0; i < 8; i++) {
      const res = await request(server).get('/api/probe/database-gone').set(tenant.auth).expect(503);
      expect(res.body.error.code).to.equal('SERVICE_UNAVAILABLE');
    }
    const after = await request(server).get('/api/probe/things/1').set(tenant.auth).expect(200);
    expect(after.headers['x-ratelimit-remaining']).to.equal('4');
  });

  it('carries the headers on a 503 of a token the database could not read, its point given back', async () => {
    const tenant = await createTenant(engine);
    const tokens = engine.container.resolve(ApiTokenService);
    const verify = tokens.verify;
    tokens.verify = () =>
      Promise.reject(
        Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED', fatal: true }),
      );
    try {
      for (let i = 0; i < 4; i++) {
        const res = await request(server).get('/api/probe/things/1').set(tenant.auth).expect(503);
        expect(res.body.error.code).to.equal('SERVICE_UNAVAILABLE');
        // The address's bucket (no token was read), spent by the 401s before: a 503 all the same, charged nothing.
        expect(res.headers['x-ratelimit-limit']).to.equal('3');
        expect(res.headers['x-ratelimit-remaining']).to.equal('0');
        expect(Number(res.headers['x-ratelimit-reset'])).to.be.above(0);
      }
    } finally {
      tokens.verify = verify;
    }
    const after = await request(server).get('/api/probe/things/1').set(tenant.auth).expect(200);
    expect(after.headers['x-ratelimit-remaining']).to.equal('4');
  });

  it('keeps separate counts per token', async () => {
    const a = await createTenant(engine);
    const b = await createTenant(engine);
    for (let i = 0; i < 5; i++) await request(server).get('/api/probe/things/1').set(a.auth).expect(200);
    await request(server).get('/api/probe/things/1').set(a.auth).expect(429);
    await request(server).get('/api/probe/things/1').set(b.auth).expect(200);
  });

  it("keeps the policy's limits for every plan unless plan multipliers are configured", async () => {
    const pro = await createTenant(engine, { plan: 'pro' });
    const res = await request(server).get('/api/probe/things/1').set(pro.auth).expect(200);
    expect(res.headers['x-ratelimit-limit']).to.equal('5');
  });

  it('raises limits by plan, by token and by RATE_LIMIT_SCALE when configured', async () => {
    const pro = await createTenant(engine, { plan: 'pro' });
    const scaled = await createTestEngine(backend(), {
      plugins: [probePlugin],
      migrate: false,
      env: { RATE_LIMIT_SCALE: '3', REDIS_PREFIX: `${backend().redisPrefix}_scaled` },
      overrides: { planRateLimits: { pro: 5 }, tokenRateLimits: { [String(pro.tokenId)]: 2 } },
    });
    try {
      const free = await createTenant(scaled);
      const app = scaled.http().callback();
      expect((await request(app).get('/api/probe/things/1').set(free.auth)).headers['x-ratelimit-limit']).to.equal(
        '15',
      );
      expect((await request(app).get('/api/probe/things/1').set(pro.auth)).headers['x-ratelimit-limit']).to.equal(
        '150',
      );
    } finally {
      await scaled.close();
    }
  });
});
