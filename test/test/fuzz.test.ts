import type { Server } from 'node:http';
import { expect } from 'chai';
import request from 'supertest';
import type { Engine, RouteRecord } from '@switchboard/core';
import { createTestEngine, createTenant, describeEachBackend, TestTenant } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import monitor from '@switchboard/plugin-server-monitor';
import usersProjects from '@switchboard/plugin-users-projects';
import { databaseState } from './support/database-state';
import { BODY_JUNK, TEXT_JUNK, VALUE_JUNK } from './support/junk';
import { routeKey, VALID_BODIES } from './support/request-integers';

const MONITOR_KEY = 'fuzz-monitor-key-0123456789abcdef';
/** What a path parameter holds when another one is the one spoiled. */
const FAIR_PARAMS: Record<string, string> = {
  id: '1',
  key: MONITOR_KEY,
  type: 'all',
  provider: 'provider_a',
  token: 'x',
};

interface Sent {
  what: string;
  status: number;
  type: string;
  body: any;
  wrote: boolean;
}

/**
 * Issue 26: every route of the three plugins (read from the registry, as the OpenAPI document lists them)
 * fed junk in its path, query and body: more than 5,000 requests per backend. Never a 5xx, always the error
 * envelope of the route's API, and a refused request changes nothing in the database.
 */
describeEachBackend('fuzzing every route', (backend) => {
  let engine: Engine;
  let tenant: TestTenant;
  // One listening server for every request: given the app's callback, supertest would listen anew for each.
  let server: Server;
  let state: () => Promise<string>;
  const writes: string[] = [];

  before(async function () {
    this.timeout(60_000);
    engine = await createTestEngine(backend(), {
      plugins: [usersProjects, campaign, monitor],
      env: { RATE_LIMIT_SCALE: '1000000', SERVER_MONITOR_API_KEY: MONITOR_KEY },
    });
    tenant = await createTenant(engine);
    server = engine.http().listen(0, '127.0.0.1');
    state = databaseState(engine.knex);
    engine.knex.on('query', (query: { sql: string }) => {
      if (/^\s*(insert|update|delete|replace)\b/i.test(query.sql)) writes.push(query.sql);
    });
  });
  after(async () => {
    server?.close();
    await engine?.close();
  });

  const pathOf = (route: RouteRecord, spoiled?: { name: string; text: string }) =>
    (route.group.options.prefix + route.path).replace(/:([a-z_]+)/g, (_, name: string) =>
      spoiled?.name === name ? spoiled.text : (FAIR_PARAMS[name] ?? '1'),
    );

  async function send(route: RouteRecord, path: string, body?: { raw: string | Buffer; type?: string }) {
    writes.length = 0;
    let req = (request(server) as any)[route.method.toLowerCase()](path).set(tenant.auth);
    if (body) req = req.set('Content-Type', body.type ?? 'application/json').send(body.raw);
    const res = await req;
    return { status: res.status, type: res.type as string, body: res.body, wrote: writes.length > 0 };
  }

  /** Every request the suite sends a route: its path, query and body spoiled one at a time. */
  function* requestsOf(
    route: RouteRecord,
  ): Generator<{ what: string; path: string; body?: { raw: string | Buffer; type?: string } }> {
    const params = Object.keys((route.spec.params as any)?.properties ?? {});
    const query = [...Object.keys((route.spec.query as any)?.properties ?? {}), 'unknown'];
    const members = Object.keys((route.spec.body as any)?.properties ?? {});
    const takesBody = route.method !== 'GET' && route.method !== 'DELETE';
    const fair = VALID_BODIES[routeKey(route)] ?? {};
    const fairBody = takesBody ? { raw: JSON.stringify(fair) } : undefined;
    for (const name of params)
      for (const text of TEXT_JUNK)
        yield { what: `path ${name}=${text.slice(0, 40)}`, path: pathOf(route, { name, text }), body: fairBody };
    for (const name of query)
      for (const text of TEXT_JUNK)
        yield { what: `query ${name}=${text.slice(0, 40)}`, path: `${pathOf(route)}?${name}=${text}`, body: fairBody };
    if (!takesBody && route.method !== 'DELETE') return;
    for (const junk of BODY_JUNK)
      yield { what: `body ${junk.name}`, path: pathOf(route), body: { raw: junk.body, type: junk.type } };
    for (const name of members)
      for (const value of VALUE_JUNK)
        yield {
          what: `member ${name}=${JSON.stringify(value).slice(0, 40)}`,
          path: pathOf(route),
          body: { raw: JSON.stringify({ ...fair, [name]: value }) },
        };
  }

  it('answers every junk request below 500 in its API error envelope (a page for people in HTML), and a refused one changes nothing', async function () {
    this.timeout(600_000);
    const problems: string[] = [];
    let sent = 0;
    let written = 0;
    let last = await state();
    for (const route of engine.registry.routes()) {
      if (route.path.includes('*')) continue; // the server monitor's catch-all: tests of its own
      for (const { what, path, body } of requestsOf(route)) {
        const res: Sent = { what, ...(await send(route, path, body)) };
        sent += 1;
        const where = `${routeKey(route)} ${what}: ${res.status}`;
        if (res.status >= 500) problems.push(`${where} ${JSON.stringify(res.body).slice(0, 200)}`);
        // The pages a person opens from a mail (confirm, unsubscribe) answer HTML, refusals included.
        else if (res.status >= 400 && res.type !== 'text/html') {
          const envelope =
            res.body?.success === false &&
            (typeof res.body.error?.code === 'string' || typeof res.body.message === 'string');
          if (!envelope)
            problems.push(`${where} without the error envelope: ${JSON.stringify(res.body).slice(0, 200)}`);
        }
        if (!res.wrote) continue;
        written += 1;
        const now = await state();
        if (res.status >= 400 && now !== last) problems.push(`${where} changed the database`);
        last = now;
      }
    }
    expect(problems.slice(0, 30), `${problems.length} problems`).to.deep.equal([]);
    expect(sent).to.be.at.least(5_000);
    expect(written, 'requests that wrote to the database').to.be.above(100);
  });
});
