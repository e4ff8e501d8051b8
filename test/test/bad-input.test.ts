import { expect } from 'chai';
import request from 'supertest';
import type { Engine } from '@switchboard/core';
import { createTestEngine, createTenant, embeddedBackend, TestBackend, TestTenant } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import usersProjects from '@switchboard/plugin-users-projects';

/** Every route of every plugin, fed junk: always a 4xx with the error envelope, never a 500. */
describe('bad input on every route', () => {
  let backend: TestBackend;
  let engine: Engine;
  let tenant: TestTenant;
  before(async () => {
    backend = embeddedBackend();
    engine = await createTestEngine(backend, {
      plugins: [campaign, usersProjects],
      env: { RATE_LIMIT_SCALE: '100000' },
    });
    tenant = await createTenant(engine);
  });
  after(async () => {
    await engine.close();
    await backend.dispose();
  });

  const bodies: Array<string | object> = [
    '[1, 2]',
    '"text"',
    '{"a":',
    'null',
    '12',
    { email: 5, name: [], lists: 'x', subscribers: 'x', subscriber_ids: [0, -1] },
  ];

  it('answers 4xx envelopes, never a 500', async () => {
    const app = engine.http().callback();
    let checked = 0;
    let rejected = 0;
    for (const route of engine.registry.routes()) {
      const path = (route.group.options.prefix + route.path).replace(/:id/g, '999999999').replace(/\/$/, '');
      for (const body of route.method === 'GET' ? [undefined] : bodies) {
        for (const query of route.method === 'GET'
          ? ['?page=-1&per_page=abc&status=zzz&search=%22&from_date=x&is_active=maybe&token=.']
          : ['', '?page=-1']) {
          const req = (request(app) as any)[route.method.toLowerCase()](path + query).set(tenant.auth);
          if (body !== undefined)
            req.set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
          const res = await req;
          const what = `${route.method} ${path}${query} ${JSON.stringify(body)}`;
          // A route that takes no query may ignore junk parameters and answer; nothing may answer 5xx.
          expect(res.status, what).to.be.below(500);
          if (res.status >= 400) {
            expect(res.body.success, what).to.equal(false);
            expect(res.body.error.code, what).to.be.a('string');
            rejected += 1;
          }
          checked += 1;
        }
      }
    }
    expect(checked).to.be.greaterThan(100);
    // Every body route refused every junk body: only some GETs may pass.
    expect(checked - rejected).to.be.below(15);
  });
});
