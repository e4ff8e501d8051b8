import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import type { Engine, RouteRecord } from '@switchboard/core';
import { createTestEngine, createTenant, describeEachBackend, TestTenant } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import monitor from '@switchboard/plugin-server-monitor';
import usersProjects from '@switchboard/plugin-users-projects';
import { databaseState } from './support/database-state';
import { routeKey, routePath } from './support/request-integers';
import { createResources, Ids, Kind } from './support/tenant-resources';

/**
 * Every token route with an `:id`: the resource the id names, and a body the route accepts (given the
 * caller's own ids), so that only the id can be the reason for a refusal. A route with `:id` missing here
 * fails the coverage test.
 */
const MATRIX: Record<string, { kind: Kind; body?: (own: Ids) => object }> = {
  'GET /api/v1/users/:id': { kind: 'user' },
  'PUT /api/v1/users/:id': { kind: 'user', body: () => ({ name: 'Mallory' }) },
  'DELETE /api/v1/users/:id': { kind: 'user' },
  'GET /api/v1/projects/:id': { kind: 'project' },
  'GET /api/campaign/subscribers/:id': { kind: 'subscriber' },
  'PUT /api/campaign/subscribers/:id': { kind: 'subscriber', body: (own) => ({ first_name: 'M', lists: [own.list] }) },
  'DELETE /api/campaign/subscribers/:id': { kind: 'subscriber' },
  'POST /api/campaign/subscribers/:id/unsubscribe': { kind: 'subscriber', body: () => ({ reason: 'mallory' }) },
  'GET /api/campaign/lists/:id': { kind: 'list' },
  'PUT /api/campaign/lists/:id': { kind: 'list', body: () => ({ name: 'Mallory' }) },
  'DELETE /api/campaign/lists/:id': { kind: 'list' },
  'POST /api/campaign/lists/:id/subscribers': { kind: 'list', body: (own) => ({ subscriber_ids: [own.subscriber] }) },
  'DELETE /api/campaign/lists/:id/subscribers': { kind: 'list', body: (own) => ({ subscriber_ids: [own.subscriber] }) },
  'GET /api/campaign/sender-profiles/:id': { kind: 'senderProfile' },
  'PUT /api/campaign/sender-profiles/:id': { kind: 'senderProfile', body: () => ({ name: 'Mallory' }) },
  'DELETE /api/campaign/sender-profiles/:id': { kind: 'senderProfile' },
  'GET /api/campaign/messages/:id': { kind: 'message' },
  'PUT /api/campaign/messages/:id': { kind: 'message', body: () => ({ subject: 'Mallory' }) },
  'DELETE /api/campaign/messages/:id': { kind: 'message' },
  'GET /api/campaign/messages/:id/stats': { kind: 'message' },
  'POST /api/campaign/messages/:id/send': { kind: 'message', body: (own) => ({ list_ids: [own.list] }) },
  'POST /api/campaign/messages/:id/test': { kind: 'message', body: () => ({ email: 'mallory@example.com' }) },
  'POST /api/campaign/messages/:id/resume': { kind: 'message' },
  'POST /api/campaign/messages/:id/cancel': { kind: 'message' },
  'GET /api/campaign/schedules/:id': { kind: 'schedule' },
  'PUT /api/campaign/schedules/:id': { kind: 'schedule', body: (own) => ({ message_id: own.message }) },
  'DELETE /api/campaign/schedules/:id': { kind: 'schedule' },
  'POST /api/campaign/schedules/:id/pause': { kind: 'schedule' },
  'POST /api/campaign/schedules/:id/resume': { kind: 'schedule' },
  'GET /api/campaign/webhooks/:id': { kind: 'webhook' },
  'PUT /api/campaign/webhooks/:id': { kind: 'webhook', body: () => ({ name: 'Mallory' }) },
  'DELETE /api/campaign/webhooks/:id': { kind: 'webhook' },
  'GET /api/campaign/webhooks/:id/deliveries': { kind: 'webhook' },
  'POST /api/campaign/webhooks/:id/test': { kind: 'webhook' },
  'GET /api/campaign/inbound-webhooks/:id': { kind: 'inboundWebhook' },
  'PUT /api/campaign/inbound-webhooks/:id': { kind: 'inboundWebhook', body: () => ({ name: 'Mallory' }) },
  'DELETE /api/campaign/inbound-webhooks/:id': { kind: 'inboundWebhook' },
  'GET /api/servermonitor/servers/:id': { kind: 'server' },
  'PUT /api/servermonitor/servers/:id': { kind: 'server', body: () => ({ title: 'Mallory', paused: true }) },
  'DELETE /api/servermonitor/servers/:id': { kind: 'server' },
  'GET /api/servermonitor/servers/:id/checks': { kind: 'server' },
};

/**
 * The server monitor's keyed routes (`.../:id/:key`: calculate one server's uptime, purge an organization's
 * logs) are the install's operator's, authenticated by the monitor key and not by an organization's token:
 * an id of any organization is theirs to name, so they are not part of this matrix.
 */
const isOperatorRoute = (route: RouteRecord) => route.path.includes(':key');
const idRoutes = (engine: Engine) =>
  engine.registry.routes().filter((route) => route.path.includes(':id') && !isOperatorRoute(route));
/** The routes with a row of the matrix (one without fails the coverage test, not this one). */
const matrixRoutes = (engine: Engine) => idRoutes(engine).filter((route) => MATRIX[routeKey(route)]);

/**
 * Issue 26: organization B's token on every route that takes an id, with organization A's ids. Each answers
 * 404 RESOURCE_NOT_FOUND and leaves A's resources, every table and the outbox as they were.
 */
describeEachBackend('tenant isolation over every route with an id', (backend) => {
  let engine: Engine;
  let app: ReturnType<Engine['http']>['callback'] extends () => infer A ? A : never;
  let alice: TestTenant;
  let bob: TestTenant;
  let aliceIds: Ids;
  let bobIds: Ids;
  let outbox: string;
  let tables: () => Promise<string>;
  const writes: string[] = [];

  before(async function () {
    this.timeout(60_000);
    engine = await createTestEngine(backend(), {
      plugins: [usersProjects, campaign, monitor],
      env: { RATE_LIMIT_SCALE: '1000000' },
    });
    app = engine.http().callback();
    alice = await createTenant(engine, { name: 'Alice Corp', plan: 'pro' });
    bob = await createTenant(engine, { name: 'Bob Corp', plan: 'pro' });
    aliceIds = await createResources(app, alice);
    bobIds = await createResources(app, bob);
    outbox = path.join(backend().dataDir, 'outbox');
    tables = databaseState(engine.knex);
    engine.knex.on('query', (query: { sql: string }) => {
      if (/^\s*(insert|update|delete|replace)\b/i.test(query.sql)) writes.push(query.sql);
    });
  });
  after(async () => {
    await engine?.close();
  });

  const send = (tenant: TestTenant, route: RouteRecord, id: number, body?: object) => {
    const req = (request(app) as any)[route.method.toLowerCase()](routePath(route, String(id))).set(tenant.auth);
    return (body ? req.send(body) : route.method === 'POST' ? req.send({}) : req) as Promise<request.Response>;
  };

  /** What A sees of its resources (every GET of the matrix, through A's token), the tables and the outbox. */
  async function aliceState() {
    const reads: Array<{ route: string; status: number; data: unknown }> = [];
    for (const route of matrixRoutes(engine).filter((r) => r.method === 'GET')) {
      const res = await send(alice, route, aliceIds[MATRIX[routeKey(route)].kind]);
      reads.push({ route: routeKey(route), status: res.status, data: res.body.data });
    }
    const mails = fs.existsSync(outbox) ? fs.readdirSync(outbox, { recursive: true }).length : 0;
    return { reads, snapshot: JSON.stringify({ reads, tables: await tables(), mails }) };
  }

  it("covers every token route with an id (the monitor's keyed operator routes left out)", () => {
    const routes = idRoutes(engine).map(routeKey);
    expect(
      routes.filter((key) => !MATRIX[key]),
      'routes with an id the matrix lacks',
    ).to.deep.equal([]);
    expect(
      Object.keys(MATRIX).filter((key) => !routes.includes(key)),
      'matrix rows no route has',
    ).to.deep.equal([]);
  });

  it("answers 404 to another organization's ids on every route and method, and changes nothing of A's", async function () {
    this.timeout(60_000);
    const start = await aliceState();
    const unread = start.reads.filter((read) => read.status !== 200).map((read) => `${read.route}: ${read.status}`);
    expect(unread, 'A reads every resource of its own').to.deep.equal([]);
    const offenders: string[] = [];
    let last = start.snapshot;
    // Deletes last: one that got through would make the routes after it answer 404 for want of the row.
    const routes = matrixRoutes(engine).sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    for (const route of routes) {
      const { kind, body } = MATRIX[routeKey(route)];
      writes.length = 0;
      const res = await send(bob, route, aliceIds[kind], body?.(bobIds));
      const refused = res.status === 404 && res.body.success === false && res.body.error?.code === 'RESOURCE_NOT_FOUND';
      if (!refused) offenders.push(`${routeKey(route)}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      if (!refused || writes.length) {
        const now = (await aliceState()).snapshot;
        if (now !== last) offenders.push(`${routeKey(route)}: changed A's data`);
        last = now;
      }
    }
    if ((await aliceState()).snapshot !== last) offenders.push("A's data changed, by a route that wrote outside SQL");
    expect(offenders, `${offenders.length} routes let another organization through`).to.deep.equal([]);
  });
});
