import { expect } from 'chai';
import request from 'supertest';
import type { Engine, RouteRecord } from '@switchboard/core';
import { createTestEngine, createTenant, describeEachBackend, TestTenant } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import usersProjects from '@switchboard/plugin-users-projects';
import {
  integerFields,
  LOOSE_INTEGERS,
  OUT_OF_RANGE,
  routeKey,
  routePath,
  VALID_BODIES,
} from './support/request-integers';

const HUGE_PAGES = ['9223372036854775808', '4611686018427387904', '1e19', '1e308'];
const UNKNOWN_METHODS = ['TRACE', 'PROPFIND', 'MKCOL', 'PURGE'];

/** Every route of every plugin, fed junk: always a 4xx with the error envelope, never a 500. */
describeEachBackend('bad input on every route', (backend) => {
  let engine: Engine;
  let tenant: TestTenant;
  before(async () => {
    engine = await createTestEngine(backend(), {
      plugins: [campaign, usersProjects],
      env: { RATE_LIMIT_SCALE: '100000' },
    });
    tenant = await createTenant(engine);
  });
  after(async () => {
    await engine.close();
  });

  const send = (method: string, path: string, body?: string | object) => {
    const req = (request(engine.http().callback()) as any)[method.toLowerCase()](path).set(tenant.auth);
    if (body === undefined) return req;
    return req.set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const expectRefused = (res: request.Response, what: string, status: number, code: string) => {
    expect(res.status, what).to.equal(status);
    expect(res.body.success, what).to.equal(false);
    expect(res.body.error.code, what).to.equal(code);
  };
  const bodyFor = (route: RouteRecord) => (route.method === 'GET' ? undefined : (VALID_BODIES[routeKey(route)] ?? {}));

  const bodies: Array<string | object> = [
    '[1, 2]',
    '"text"',
    '{"a":',
    'null',
    '12',
    { email: 5, name: [], lists: 'x', subscribers: 'x', subscriber_ids: [0, -1] },
  ];

  it('answers 4xx envelopes, never a 500', async function () {
    // Several processes or every route on a busy 2-core host: ~10 s under .ci/run on a slow day.
    this.timeout(60_000);
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

  it('answers huge page numbers 422 naming page where a route pages, and never a 5xx elsewhere', async () => {
    let paged = 0;
    for (const route of engine.registry.routes()) {
      const pages = integerFields(route).some((f) => f.where === 'query' && f.name === 'page');
      paged += pages ? 1 : 0;
      for (const page of HUGE_PAGES) {
        const path = `${routePath(route, '999999999')}?page=${page}`;
        const res = await send(route.method, path);
        const what = `${route.method} ${path}`;
        if (pages) {
          expectRefused(res, what, 422, 'VALIDATION_ERROR');
          expect(res.body.error.details.field, what).to.equal('page');
        } else {
          expect(res.status, what).to.be.below(500);
          if (res.status >= 400) expect(res.body.success, what).to.equal(false);
        }
      }
    }
    // The routes with a page query: four, and since campaign 1.10 a webhook's delivery log.
    expect(paged).to.equal(5);
  });

  it('answers unknown methods 405 with Allow on every route, and 501 on paths no route has', async () => {
    for (const route of engine.registry.routes()) {
      for (const method of UNKNOWN_METHODS) {
        const path = routePath(route, '999999999');
        const res = await send(method, path);
        const what = `${method} ${path}`;
        expectRefused(res, what, 405, 'METHOD_NOT_ALLOWED');
        expect(res.headers.allow.split(', '), what).to.include(route.method);
      }
    }
    // Segments enough that no route's pattern matches (a group's `/:provider` takes one).
    const nowhere = '/no/such/thing/here';
    for (const group of engine.registry.groups) {
      for (const method of UNKNOWN_METHODS) {
        const res = await send(method, `${group.options.prefix}${nowhere}`);
        expectRefused(res, `${method} ${group.options.prefix}${nowhere}`, 501, 'NOT_IMPLEMENTED');
      }
    }
  });

  it('refuses loose integers in every path and query parameter: 422, rule pattern', async () => {
    let checked = 0;
    for (const route of engine.registry.routes()) {
      for (const field of integerFields(route).filter((f) => f.where !== 'body')) {
        for (const text of LOOSE_INTEGERS) {
          const path = field.where === 'path' ? routePath(route, text) : `${routePath(route)}?${field.name}=${text}`;
          const res = await send(route.method, path, bodyFor(route));
          const what = `${route.method} ${path}`;
          expectRefused(res, what, 422, 'VALIDATION_ERROR');
          expect(res.body.error.details, what).to.deep.equal({ field: field.name, rule: 'pattern' });
          checked += 1;
        }
      }
    }
    expect(checked).to.be.greaterThan(100);
  });

  it('refuses 1e308, 2^64, 400 digits and -1 in every integer field of every request: 422 naming the field', async () => {
    const fields: string[] = [];
    for (const route of engine.registry.routes()) {
      for (const field of integerFields(route)) {
        for (const value of OUT_OF_RANGE) {
          if (field.where === 'body' && value.json === undefined) continue;
          let res;
          if (field.where === 'path') res = await send(route.method, routePath(route, value.text), bodyFor(route));
          else if (field.where === 'query')
            res = await send(route.method, `${routePath(route)}?${field.name}=${value.text}`, bodyFor(route));
          else {
            const json = field.inArray ? [value.json] : value.json;
            res = await send(route.method, routePath(route), { ...bodyFor(route), [field.name]: json });
          }
          const what = `${routeKey(route)} ${field.where} ${field.name}=${value.text}`;
          expectRefused(res, what, 422, 'VALIDATION_ERROR');
          expect(res.body.error.details, what).to.deep.equal({
            field: field.inArray ? `${field.name}.0` : field.name,
            rule: field.where === 'body' ? value.jsonRule : value.textRule,
          });
        }
        fields.push(`${routeKey(route)} ${field.name}`);
      }
    }
    expect(fields).to.include.members([
      'POST /api/campaign/schedules max_runs',
      'POST /api/campaign/schedules day_of_week',
      'POST /api/campaign/schedules message_id',
      'PUT /api/campaign/schedules/:id max_runs',
      'GET /api/campaign/schedules message_id',
      'POST /api/campaign/lists/:id/subscribers subscriber_ids',
      'DELETE /api/campaign/lists/:id/subscribers subscriber_ids',
      'POST /api/campaign/subscribers lists',
      'PUT /api/campaign/subscribers/:id lists',
      'POST /api/campaign/subscribers/batch lists',
      'DELETE /api/campaign/subscribers/batch ids',
      'GET /api/campaign/subscribers list_id',
      'GET /api/campaign/subscribers per_page',
      'POST /api/v1/projects owner_id',
      'GET /api/v1/projects owner_id',
      'GET /api/v1/users/:id id',
      'DELETE /api/campaign/lists/:id id',
    ]);
  });
});
