import { expect } from 'chai';
import request from 'supertest';
import type { Server } from 'node:http';
import { Engine, INT_UNSIGNED_MAX, MAX_ID, MAX_PAGE } from '@switchboard/core';
import { apiClient, createTestEngine, createTenant, describeEachBackend, TestTenant } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import usersProjects from '@switchboard/plugin-users-projects';
import { integerFields, routeKey, routePath, VALID_BODIES } from './support/request-integers';

const LOOSE_INTEGERS = ['0x10', '+1', '01', '%201', '1e3', '%20%201', '1.0'];
/** What each out-of-range value breaks: text is refused before coercion, JSON numbers by their range. */
const OUT_OF_RANGE = [
  { text: '1e308', json: 1e308, textRule: 'pattern', jsonRule: 'maximum' },
  { text: '18446744073709551616', json: 2 ** 64, textRule: 'maximum', jsonRule: 'maximum' },
  { text: '-1', json: -1, textRule: 'minimum', jsonRule: 'minimum' },
];

describeEachBackend('numbers in requests: pages, ids and integer fields within their columns', (backend) => {
  let engine: Engine;
  let server: Server;
  let tenant: TestTenant;
  before(async () => {
    engine = await createTestEngine(backend(), {
      plugins: [campaign, usersProjects],
      env: { RATE_LIMIT_SCALE: '100000' },
    });
    server = engine.http().listen(0);
    tenant = await createTenant(engine);
  });
  after(async () => {
    server.close();
    await engine.close();
  });

  const send = (method: string, path: string, body?: object) => {
    const req = (request(server) as any)[method.toLowerCase()](path).set(tenant.auth);
    return body === undefined ? req : req.send(body);
  };
  const pagedRoutes = () =>
    engine.registry.routes().filter((r) => integerFields(r).some((f) => f.where === 'query' && f.name === 'page'));

  it('refuses huge page numbers on every paginated route: 422 naming page', async () => {
    expect(pagedRoutes().map(routeKey)).to.include.members([
      'GET /api/campaign/subscribers',
      'GET /api/campaign/messages',
      'GET /api/v1/users',
      'GET /api/v1/projects',
    ]);
    for (const route of pagedRoutes()) {
      for (const page of ['9223372036854775808', '4611686018427387904', '1e19', '1e308', String(MAX_PAGE + 1)]) {
        const res = await send('GET', `${routePath(route)}?page=${page}`);
        expect(res.status, `${routeKey(route)} page=${page}`).to.equal(422);
        expect(res.body.error.code).to.equal('VALIDATION_ERROR');
        expect(res.body.error.details.field).to.equal('page');
      }
    }
  });

  it('answers the last allowed page, empty, with the offset the databases accept', async () => {
    for (const route of pagedRoutes()) {
      const res = await send('GET', `${routePath(route)}?page=${MAX_PAGE}&per_page=100`);
      expect(res.status, routeKey(route)).to.equal(200);
      expect(res.body.data).to.deep.equal([]);
      expect(res.body.pagination?.current_page ?? res.body.meta.page).to.equal(MAX_PAGE);
    }
  });

  it('reads a path id only as plain decimal digits: DELETE /lists/+1 deletes nothing', async () => {
    const api = apiClient(server, '/api/campaign', tenant);
    const list = (await api.post('/lists', { name: 'Plus', code: 'plus' }).expect(201)).body.data;
    const n = list.id as number;
    for (const id of [`0x${n.toString(16)}`, `+${n}`, `0${n}`, `%20${n}`, `${n}e0`, `${n}.0`]) {
      const res = await api.delete(`/lists/${id}`);
      expect(res.status, id).to.equal(422);
      expect(res.body.error.details, id).to.deep.equal({ field: 'id', rule: 'pattern' });
    }
    await api.get(`/lists/${list.id}`).expect(200);
  });

  it('refuses loose integers in every path and query parameter (rule pattern)', async () => {
    let checked = 0;
    for (const route of engine.registry.routes()) {
      for (const field of integerFields(route).filter((f) => f.where !== 'body')) {
        for (const text of LOOSE_INTEGERS) {
          const path = field.where === 'path' ? routePath(route, text) : `${routePath(route)}?${field.name}=${text}`;
          const res = await send(
            route.method,
            path,
            route.method === 'GET' ? undefined : VALID_BODIES[routeKey(route)],
          );
          const what = `${route.method} ${path}`;
          expect(res.status, what).to.equal(422);
          expect(res.body.error.details, what).to.deep.equal({ field: field.name, rule: 'pattern' });
          checked += 1;
        }
      }
    }
    expect(checked).to.be.greaterThan(100);
  });

  it('refuses 1e308, 2^64 and -1 in every integer field of every request (422 naming the field)', async () => {
    const table: string[] = [];
    for (const route of engine.registry.routes()) {
      for (const field of integerFields(route)) {
        for (const value of OUT_OF_RANGE) {
          let res;
          if (field.where === 'path') res = await send(route.method, routePath(route, value.text), bodyFor(route));
          else if (field.where === 'query')
            res = await send(route.method, `${routePath(route)}?${field.name}=${value.text}`, bodyFor(route));
          else {
            const json = field.inArray ? [value.json] : value.json;
            res = await send(route.method, routePath(route), { ...bodyFor(route), [field.name]: json });
          }
          const what = `${routeKey(route)} ${field.where} ${field.name}=${value.text}`;
          expect(res.status, what).to.equal(422);
          expect(res.body.error.details, what).to.deep.equal({
            field: field.inArray ? `${field.name}.0` : field.name,
            rule: field.where === 'body' ? value.jsonRule : value.textRule,
          });
        }
        table.push(`${routeKey(route)} ${field.name}`);
      }
    }
    expect(table).to.include.members([
      'POST /api/campaign/schedules max_runs',
      'POST /api/campaign/schedules day_of_week',
      'POST /api/campaign/schedules message_id',
      'GET /api/campaign/schedules message_id',
      'POST /api/campaign/lists/:id/subscribers subscriber_ids',
      'POST /api/campaign/subscribers/batch lists',
      'DELETE /api/campaign/subscribers/batch ids',
      'PUT /api/campaign/subscribers/:id lists',
      'GET /api/campaign/subscribers list_id',
      'POST /api/v1/projects owner_id',
      'GET /api/v1/projects owner_id',
      'GET /api/v1/users/:id id',
    ]);
  });

  it('refuses out-of-range integers in batch rows, row by row', async () => {
    const api = apiClient(server, '/api/campaign', tenant);
    const rows = [
      { method: 'post', field: 'lists.0', row: (v: number) => ({ email: 'row@example.com', lists: [v] }) },
      { method: 'put', field: 'id', row: (v: number) => ({ id: v }) },
      { method: 'put', field: 'lists.0', row: (v: number) => ({ email: 'row@example.com', lists: [v] }) },
    ] as const;
    for (const { method, field, row } of rows) {
      for (const value of OUT_OF_RANGE) {
        const res = await api[method]('/subscribers/batch', { subscribers: [row(value.json)] }).expect(200);
        expect(res.body.data.failed, `${method} ${field} ${value.text}`).to.equal(1);
        expect(res.body.data.errors[0]).to.include({ field, rule: value.jsonRule });
      }
    }
  });

  it('takes the largest values the columns hold, exactly', async () => {
    const api = apiClient(server, '/api/campaign', tenant);
    await api.get(`/lists/${MAX_ID}`).expect(404);
    const message = (await api.post('/messages', { name: 'Weekly', subject: 'News' }).expect(201)).body.data;
    const body = { message_id: message.id, frequency: 'daily', send_time: '10:00', timezone: 'Europe/Berlin' };
    const created = (await api.post('/schedules', { ...body, max_runs: INT_UNSIGNED_MAX }).expect(201)).body.data;
    expect(created.max_runs).to.equal(INT_UNSIGNED_MAX);
    expect((await api.get(`/schedules/${created.id}`).expect(200)).body.data.max_runs).to.equal(INT_UNSIGNED_MAX);
    const owner = await apiClient(server, '/api/v1', tenant).post('/projects', { name: 'Far', owner_id: MAX_ID });
    expect(owner.status).to.equal(422);
    expect(owner.body.error.details).to.deep.equal({ field: 'owner_id', rule: 'exists' });
  });
});

const bodyFor = (route: { method: string } & Parameters<typeof routeKey>[0]) =>
  route.method === 'GET' ? undefined : (VALID_BODIES[routeKey(route)] ?? {});
