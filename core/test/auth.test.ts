import { expect } from 'chai';
import request from 'supertest';
import type { Server } from 'node:http';
import { describeEachBackend, createTestEngine, createTenant, ManualClock } from '../src/testing';
import { Engine, ApiTokenService } from '../src';
import { hashToken } from '../src/auth/api-tokens';
import { probePlugin } from './support/probe-plugin';

describeEachBackend('API token authentication', (backend) => {
  let engine: Engine;
  let server: Server;
  const clock = new ManualClock(new Date('2026-03-01T00:00:00Z'));

  before(async () => {
    engine = await createTestEngine(backend(), {
      plugins: [probePlugin],
      clock,
      env: { RATE_LIMIT_SCALE: '1000' },
      overrides: { trustedProxies: ['loopback'], tokenCacheSeconds: 0 },
    });
    server = engine.http().listen(0);
  });
  after(async () => {
    server.close();
    await engine.close();
  });

  it('stores only a hash of the token, and the token is long and random', async () => {
    const tenant = await createTenant(engine);
    expect(tenant.token).to.match(/^sb_[A-Za-z0-9_-]{43}$/);
    const row = await engine.knex('api_tokens').where({ id: tenant.tokenId }).first();
    expect(row.token_hash).to.equal(hashToken(tenant.token));
    expect(JSON.stringify(row)).not.to.contain(tenant.token);
  });

  it('answers 401 AUTH_INVALID_TOKEN for a missing, malformed or unknown token', async () => {
    for (const header of [undefined, 'Basic abc', 'Bearer sb_unknown']) {
      const req = request(server).get('/api/probe/things/1');
      if (header) req.set('Authorization', header);
      const res = await req.expect(401);
      expect(res.body.error.code).to.equal('AUTH_INVALID_TOKEN');
      expect(res.headers['www-authenticate']).to.equal('Bearer');
    }
  });

  it('refuses a revoked token', async () => {
    const tenant = await createTenant(engine);
    await request(server).get('/api/probe/things/1').set(tenant.auth).expect(200);
    expect(await engine.container.resolve(ApiTokenService).revoke(tenant.tokenId)).to.equal(true);
    const res = await request(server).get('/api/probe/things/1').set(tenant.auth).expect(401);
    expect(res.body.error.message).to.contain('revoked');
  });

  it('refuses a token once it has expired', async () => {
    const tenant = await createTenant(engine, { expiresAt: new Date(clock.now().getTime() + 60_000) });
    await request(server).get('/api/probe/things/1').set(tenant.auth).expect(200);
    clock.advance(61_000);
    const res = await request(server).get('/api/probe/things/1').set(tenant.auth).expect(401);
    expect(res.body.error.message).to.contain('expired');
  });

  it('answers 403 AUTH_INSUFFICIENT_PERMISSIONS without the permission; write implies read', async () => {
    const reader = await createTenant(engine, { permissions: ['things:read'] });
    await request(server).get('/api/probe/things/1').set(reader.auth).expect(200);
    const denied = await request(server)
      .post('/api/probe/things')
      .set(reader.auth)
      .send({ email: 'a@b.co' })
      .expect(403);
    expect(denied.body.error.code).to.equal('AUTH_INSUFFICIENT_PERMISSIONS');

    const writer = await createTenant(engine, { permissions: ['things:write'] });
    await request(server).get('/api/probe/things/1').set(writer.auth).expect(200);
    const wildcard = await createTenant(engine, { permissions: ['things:*'] });
    await request(server).post('/api/probe/things').set(wildcard.auth).send({ email: 'a@b.co' }).expect(201);
    const other = await createTenant(engine, { permissions: ['gadgets:*'] });
    await request(server).get('/api/probe/things/1').set(other.auth).expect(403);
  });

  it('checks the IP whitelist, with addresses and CIDR ranges', async () => {
    const inRange = await createTenant(engine, { ipAllowlist: ['10.0.0.0/8', '127.0.0.1'] });
    await request(server).get('/api/probe/things/1').set(inRange.auth).expect(200);
    const elsewhere = await createTenant(engine, { ipAllowlist: ['192.0.2.0/24'] });
    const res = await request(server).get('/api/probe/things/1').set(elsewhere.auth).expect(401);
    expect(res.body.error.message).to.contain('address');
  });

  it('honours X-Forwarded-For only from a trusted proxy', async () => {
    const tenant = await createTenant(engine, { ipAllowlist: ['192.0.2.10'] });
    // The test client connects from loopback, which this engine trusts as a proxy.
    await request(server).get('/api/probe/things/1').set(tenant.auth).set('X-Forwarded-For', '192.0.2.10').expect(200);
    await request(server).get('/api/probe/things/1').set(tenant.auth).set('X-Forwarded-For', '192.0.2.11').expect(401);

    const untrusting = await createTestEngine(backend(), {
      plugins: [probePlugin],
      migrate: false,
      env: { RATE_LIMIT_SCALE: '1000' },
    });
    try {
      await request(untrusting.http().callback())
        .get('/api/probe/things/1')
        .set(tenant.auth)
        .set('X-Forwarded-For', '192.0.2.10')
        .expect(401);
    } finally {
      await untrusting.close();
    }
  });

  it('scopes every request to the token organization', async () => {
    const a = await createTenant(engine, { name: 'A' });
    const b = await createTenant(engine, { name: 'B' });
    const resA = await request(server).get('/api/probe/things/1').set(a.auth).expect(200);
    const resB = await request(server).get('/api/probe/things/1').set(b.auth).expect(200);
    expect(resA.body.data.organization_id).to.equal(a.organizationId);
    expect(resB.body.data.organization_id).to.equal(b.organizationId);
  });
});
