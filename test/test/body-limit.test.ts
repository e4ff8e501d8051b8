import type { Server } from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import type { Engine } from '@switchboard/core';
import { createTestEngine, createTenant, describeEachBackend, TestTenant } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import monitor from '@switchboard/plugin-server-monitor';
import usersProjects from '@switchboard/plugin-users-projects';
import { routePath } from './support/request-integers';

const MONITOR_KEY = 'body-limit-test-key-0123456789';

/**
 * issue 26: a body over `http.bodyLimit` is a 413 in its group's error envelope on every route with a JSON
 * body (the raw bodies of provider webhooks: campaign's inbound-webhooks test).
 */
describeEachBackend('body limit on every route', (backend) => {
  let engine: Engine;
  let server: Server;
  let tenant: TestTenant;
  before(async () => {
    engine = await createTestEngine(backend(), {
      plugins: [usersProjects, campaign, monitor],
      env: { RATE_LIMIT_SCALE: '100000', SERVER_MONITOR_API_KEY: MONITOR_KEY },
      overrides: { bodyLimit: '1kb' },
    });
    tenant = await createTenant(engine);
    server = engine.http().listen(0);
  });
  after(async () => {
    server.close();
    await engine.close();
  });

  it('answers 413 PAYLOAD_TOO_LARGE (or the monitor envelope) for a body one byte over the limit', async () => {
    const oversized = JSON.stringify({ name: 'x'.repeat(1024 - 11 + 1) });
    expect(Buffer.byteLength(oversized)).to.equal(1025);
    let checked = 0;
    for (const route of engine.registry.routes()) {
      if (!route.spec.body) continue;
      const path = routePath(route)
        .replace(/:key\b/, MONITOR_KEY)
        .replace(/:provider\b/, 'provider-a');
      const res = await (request(server) as any)
        [route.method.toLowerCase()](path)
        .set(tenant.auth)
        .set('Content-Type', 'application/json')
        .send(oversized);
      const what = `${route.method} ${path}`;
      expect(res.status, what).to.equal(413);
      expect(res.body.success, what).to.equal(false);
      if (res.body.error) expect(res.body.error.code, what).to.equal('PAYLOAD_TOO_LARGE');
      else expect(res.body.message, what).to.contain('larger than the limit');
      checked += 1;
    }
    expect(checked).to.be.greaterThan(20);
  });
});
