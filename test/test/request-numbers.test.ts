import { expect } from 'chai';
import request from 'supertest';
import type { Server } from 'node:http';
import { Engine, INT_UNSIGNED_MAX, MAX_ID, MAX_PAGE } from '@switchboard/core';
import { apiClient, createTestEngine, createTenant, describeEachBackend, TestTenant } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import usersProjects from '@switchboard/plugin-users-projects';
import { integerFields, OUT_OF_RANGE, routeKey, routePath } from './support/request-integers';

describeEachBackend('numbers in requests at the edges of their columns', (backend) => {
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

  it('answers the last allowed page, empty, with the offset the databases accept', async () => {
    // A page of one object's items (a webhook's deliveries) needs the object: routePath names id 1.
    const hook = await apiClient(server, '/api/campaign', tenant)
      .post('/webhooks', { name: 'Pages', url: 'https://hooks.example/pages', events: ['sent'] })
      .expect(201);
    expect(hook.body.data.id).to.equal(1);
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

  it('refuses out-of-range integers in batch rows, row by row', async () => {
    const api = apiClient(server, '/api/campaign', tenant);
    const rows = [
      { method: 'post', field: 'lists.0', row: (v: number) => ({ email: 'row@example.com', lists: [v] }) },
      { method: 'put', field: 'id', row: (v: number) => ({ id: v }) },
      { method: 'put', field: 'lists.0', row: (v: number) => ({ email: 'row@example.com', lists: [v] }) },
    ] as const;
    for (const { method, field, row } of rows) {
      for (const value of OUT_OF_RANGE) {
        if (value.json === undefined) continue;
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
