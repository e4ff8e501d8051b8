import { expect } from 'chai';
import request from 'supertest';
import type { Server } from 'node:http';
import { createTestEngine, createTenant, describeEachBackend, recordingLogger, TestTenant } from '../src/testing';
import type { Engine } from '../src';
import { probePlugin } from './support/probe-plugin';

describeEachBackend('methods no route answers', (backend) => {
  let engine: Engine;
  let server: Server;
  let tenant: TestTenant;
  const log = recordingLogger();

  before(async () => {
    engine = await createTestEngine(backend(), {
      plugins: [probePlugin],
      env: { RATE_LIMIT_SCALE: '100' },
      logger: log.logger,
    });
    server = engine.http().listen(0);
    tenant = await createTenant(engine);
  });
  after(async () => {
    server.close();
    await engine.close();
  });

  const send = (method: string, path: string) => request(server)[method as 'get'](path).set(tenant.auth);

  it('answers an unknown method on a known path with 405 and Allow, in the error envelope', async () => {
    for (const method of ['trace', 'propfind', 'mkcol', 'purge']) {
      for (const [path, allow] of [
        ['/api/probe/things/7', 'HEAD, GET'],
        ['/api/probe/things', 'POST'],
        ['/health', 'HEAD, GET'],
        ['/api/openapi.json', 'HEAD, GET'],
      ]) {
        const res = await send(method, path);
        expect(res.status, `${method} ${path}`).to.equal(405);
        expect(res.headers.allow, `${method} ${path}`).to.equal(allow);
        expect(res.body.success).to.equal(false);
        expect(res.body.error.code).to.equal('METHOD_NOT_ALLOWED');
        expect(res.body.error.message).to.contain(allow);
      }
    }
  });

  it('answers a known method the path does not take with 405 and Allow', async () => {
    const res = await send('put', '/api/probe/things/7').expect(405);
    expect(res.headers.allow).to.equal('HEAD, GET');
    expect(res.body.error.code).to.equal('METHOD_NOT_ALLOWED');
  });

  it('answers an unknown method elsewhere with 501 NOT_IMPLEMENTED, without Allow', async () => {
    for (const method of ['trace', 'propfind', 'mkcol']) {
      for (const path of ['/nowhere', '/api/probe/nothing-here', '/api/probe-public/nothing-here']) {
        const res = await send(method, path);
        expect(res.status, `${method} ${path}`).to.equal(501);
        expect(res.headers.allow).to.equal(undefined);
        expect(res.body).to.deep.equal({
          success: false,
          error: { code: 'NOT_IMPLEMENTED', message: `The method ${method.toUpperCase()} is not implemented` },
        });
      }
    }
  });

  it("answers in the error body of the path's group when the group renders its own", async () => {
    const allowed = await send('trace', '/api/probe-own-errors/ping').expect(405);
    expect(allowed.body).to.deep.equal({ failed: 'METHOD_NOT_ALLOWED' });
    expect(allowed.headers.allow).to.equal('HEAD, GET');
    const unknown = await send('propfind', '/api/probe-own-errors/nothing-here').expect(501);
    expect(unknown.body).to.deep.equal({ failed: 'NOT_IMPLEMENTED' });
  });

  it('keeps OPTIONS as it was: 200 with Allow', async () => {
    const res = await send('options', '/api/probe/things/7').expect(200);
    expect(res.headers.allow).to.equal('HEAD, GET');
  });

  it('logs none of them as an error', () => {
    expect(log.errors()).to.deep.equal([]);
  });
});
