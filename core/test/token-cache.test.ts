import { expect } from 'chai';
import request from 'supertest';
import type { Server } from 'node:http';
import { describeEachBackend, createTestEngine, createTenant, ManualClock, TestTenant, waitFor } from '../src/testing';
import { Engine, ApiTokenService } from '../src';
import { probePlugin } from './support/probe-plugin';

describeEachBackend('API tokens: the verified-token cache', (backend) => {
  let engine: Engine;
  let server: Server;

  before(async () => {
    engine = await createTestEngine(backend(), { plugins: [probePlugin], env: { RATE_LIMIT_SCALE: '1000' } });
    expect(engine.config.tokenCacheSeconds).to.equal(10);
    server = engine.http().listen(0);
  });
  after(async () => {
    server.close();
    await engine.close();
  });

  const status = async (tenant: TestTenant) =>
    (await request(server).get('/api/probe/things/1').set(tenant.auth)).status;

  /** Another process on the same database and Redis: its own engine, its own cache. */
  const otherProcess = () =>
    createTestEngine(backend(), { plugins: [probePlugin], migrate: false, env: { RATE_LIMIT_SCALE: '1000' } });

  it('refuses a cached token at once when this process revokes it', async () => {
    const tenant = await createTenant(engine);
    expect(await status(tenant)).to.equal(200);
    expect(await engine.container.resolve(ApiTokenService).revoke(tenant.tokenId)).to.equal(true);
    const res = await request(server).get('/api/probe/things/1').set(tenant.auth).expect(401);
    expect(res.body.error.message).to.contain('revoked');
  });

  it('refuses a cached token within a second of another process revoking it', async () => {
    const tenant = await createTenant(engine);
    const other = await otherProcess();
    try {
      expect(await status(tenant)).to.equal(200);
      expect(await status(tenant)).to.equal(200);
      expect(await other.container.resolve(ApiTokenService).revoke(tenant.tokenId)).to.equal(true);
      await waitFor(async () => (await status(tenant)) === 401, 1000);
    } finally {
      await other.close();
    }
  });

  it('keeps serving other cached tokens after a revocation elsewhere', async () => {
    const kept = await createTenant(engine);
    const gone = await createTenant(engine);
    expect(await status(kept)).to.equal(200);
    expect(await status(gone)).to.equal(200);
    const other = await otherProcess();
    try {
      await other.container.resolve(ApiTokenService).revoke(gone.tokenId);
    } finally {
      await other.close();
    }
    await waitFor(async () => (await status(gone)) === 401, 1000);
    expect(await status(kept)).to.equal(200);
  });

  it('verifies against the database while the revocation revision cannot be read', async () => {
    const tenant = await createTenant(engine);
    expect(await status(tenant)).to.equal(200);
    // A revocation written by hand raises no revision; only a failed read of it drops the cache.
    await engine.knex('api_tokens').where({ id: tenant.tokenId }).update({ revoked_at: new Date() });
    await engine.knex.schema.renameTable('api_token_revision', 'api_token_revision_away');
    try {
      await waitFor(async () => (await status(tenant)) === 401, 1000);
    } finally {
      await engine.knex.schema.renameTable('api_token_revision_away', 'api_token_revision');
    }
  });

  it('refuses a cached token once its expiry is reached', async () => {
    const clock = new ManualClock(new Date());
    const clocked = await createTestEngine(backend(), {
      plugins: [probePlugin],
      migrate: false,
      clock,
      env: { RATE_LIMIT_SCALE: '1000' },
    });
    try {
      const tenant = await createTenant(clocked, { expiresAt: new Date(clock.now().getTime() + 60_000) });
      const app = clocked.http().callback();
      await request(app).get('/api/probe/things/1').set(tenant.auth).expect(200);
      clock.advance(59_000);
      await request(app).get('/api/probe/things/1').set(tenant.auth).expect(200);
      clock.advance(1_000);
      const res = await request(app).get('/api/probe/things/1').set(tenant.auth).expect(401);
      expect(res.body.error.message).to.contain('expired');
    } finally {
      await clocked.close();
    }
  });
});
