import { expect } from 'chai';
import request from 'supertest';
import type { Server } from 'node:http';
import { describeEachBackend, createTestEngine, createTenant, TestTenant } from '../src/testing';
import type { Engine } from '../src';
import { probePlugin } from './support/probe-plugin';

describeEachBackend('HTTP envelopes and error mapping', (backend) => {
  let engine: Engine;
  let server: Server;
  let tenant: TestTenant;

  before(async () => {
    engine = await createTestEngine(backend(), {
      plugins: [probePlugin],
      env: { RATE_LIMIT_SCALE: '100' },
      overrides: { bodyLimit: '1kb' },
    });
    server = engine.http().listen(0);
    tenant = await createTenant(engine);
  });
  after(async () => {
    server.close();
    await engine.close();
  });

  it('wraps data in the success envelope with an ISO UTC timestamp and the version', async () => {
    const res = await request(server).get('/api/probe/things/7').set(tenant.auth).expect(200);
    expect(res.body.success).to.equal(true);
    expect(res.body.data).to.deep.equal({ id: 7, organization_id: tenant.organizationId });
    expect(res.body.meta.version).to.equal(engine.config.version);
    expect(res.body.meta.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.headers['x-request-id']).to.be.a('string').and.not.empty;
  });

  it('fails a response that drifts from its schema in tests: a wrong type or an undocumented member', async () => {
    await request(server).get('/api/probe/drift/3').set(tenant.auth).expect(200, { n: 3 });
    for (const id of [1, 2]) {
      const res = await request(server).get(`/api/probe/drift/${id}`).set(tenant.auth).expect(500);
      expect(res.body.error.code).to.equal('INTERNAL_ERROR');
    }
  });

  it('fails an answer whose status the route does not document in tests, and publishes those it does', async () => {
    const documented = await request(server).get('/api/probe/duplicates/1').set(tenant.auth).expect(409);
    expect(documented.body.error.code).to.equal('DUPLICATE_ENTRY');
    const gone = await request(server).get('/api/probe/gone').set(tenant.auth).expect(500);
    expect(gone.body.error.code).to.equal('INTERNAL_ERROR');
    const document = (await request(server).get('/api/openapi.json').expect(200)).body;
    const responses = document.paths['/api/probe/duplicates/{id}'].get.responses;
    expect(Object.keys(responses)).to.have.members(['200', '401', '403', '404', '409', '422', '429', '431', '503']);
    expect(responses['409'].content['application/json'].schema.required).to.deep.equal(['success', 'error']);
    // A route with neither query nor path parameters answers 431 as well (to over 16 KB of headers).
    const created = document.paths['/api/probe/things'].post.responses;
    expect(created).to.have.property('431');
    const big = await request(server)
      .post('/api/probe/things')
      .set(tenant.auth)
      .set('Cookie', `s=${'a'.repeat(17_000)}`)
      .send({ email: 'a@b.co' })
      .then(
        (r) => r.status,
        (e: { code?: string }) => e.code,
      );
    expect(big).to.equal(431);
  });

  it('answers 201 with defaults applied and unknown members dropped', async () => {
    const res = await request(server)
      .post('/api/probe/things')
      .set(tenant.auth)
      .send({ email: 'a@b.co', extra: 1 })
      .expect(201);
    expect(res.body.data).to.deep.equal({ email: 'a@b.co', count: 1 });
  });

  it('maps a missing required field to 422 VALIDATION_ERROR with field and rule', async () => {
    const res = await request(server).post('/api/probe/things').set(tenant.auth).send({}).expect(422);
    expect(res.body).to.deep.equal({
      success: false,
      error: { code: 'VALIDATION_ERROR', message: 'email is required', details: { field: 'email', rule: 'required' } },
    });
  });

  it('maps an invalid value to 422 naming the field and the rule', async () => {
    const bad = await request(server).post('/api/probe/things').set(tenant.auth).send({ email: 'nope' }).expect(422);
    expect(bad.body.error.details).to.deep.equal({ field: 'email', rule: 'format' });
    const neg = await request(server)
      .post('/api/probe/things')
      .set(tenant.auth)
      .send({ email: 'a@b.co', count: -1 })
      .expect(422);
    expect(neg.body.error.details).to.deep.equal({ field: 'count', rule: 'minimum' });
    const id = await request(server).get('/api/probe/things/abc').set(tenant.auth).expect(422);
    expect(id.body.error.details).to.deep.equal({ field: 'id', rule: 'type' });
  });

  it('answers malformed JSON with 400 BAD_REQUEST, never a 500, quoting none of the body', async () => {
    const post = (body: string) =>
      request(server).post('/api/probe/things').set(tenant.auth).set('Content-Type', 'application/json').send(body);
    for (const body of ['{"email": ', '{"name": "x", "email": password123}']) {
      const res = await post(body).expect(400);
      expect(res.body.error).to.deep.include({ code: 'BAD_REQUEST', message: 'Malformed JSON in request body' });
    }
    const scalar = await post('"just a string"').expect(400);
    expect(scalar.body.error.message).to.equal('The request body must be a JSON object or array');
  });

  it('drops a __proto__ member of a JSON body: no prototype is changed', async () => {
    const res = await request(server)
      .post('/api/probe/things')
      .set(tenant.auth)
      .set('Content-Type', 'application/json')
      .send('{"email":"a@b.co","__proto__":{"polluted":true}}')
      .expect(201);
    expect(res.body.data).to.deep.equal({ email: 'a@b.co', count: 1 });
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined);
  });

  it('refuses a body over the limit with 413 and a non-JSON body with 415', async () => {
    const big = await request(server)
      .post('/api/probe/things')
      .set(tenant.auth)
      .send({ email: `${'a'.repeat(2000)}@b.co` })
      .expect(413);
    expect(big.body.error.code).to.equal('PAYLOAD_TOO_LARGE');
    const text = await request(server)
      .post('/api/probe/things')
      .set(tenant.auth)
      .set('Content-Type', 'text/plain')
      .send('hi')
      .expect(415);
    expect(text.body.error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers an unknown route with 404 and a wrong method with 405', async () => {
    const missing = await request(server).get('/api/probe/nothing-here').set(tenant.auth).expect(404);
    expect(missing.body.error.code).to.equal('RESOURCE_NOT_FOUND');
    const outside = await request(server).get('/no/such/path').expect(404);
    expect(outside.body.success).to.equal(false);
    const method = await request(server).delete('/api/probe/things').set(tenant.auth).expect(405);
    expect(method.body.error.code).to.equal('METHOD_NOT_ALLOWED');
  });

  it('turns a thrown bug into a 500 envelope without the stack or the message', async () => {
    const res = await request(server).get('/api/probe/boom').set(tenant.auth).expect(500);
    expect(res.body).to.deep.equal({
      success: false,
      error: { code: 'INTERNAL_ERROR', message: 'Internal server error' },
    });
    expect(JSON.stringify(res.body)).not.to.contain('secret');
  });

  it('maps QUOTA_EXCEEDED to 403', async () => {
    const res = await request(server).get('/api/probe/quota').set(tenant.auth).expect(403);
    expect(res.body.error.code).to.equal('QUOTA_EXCEEDED');
  });

  it('serves public groups without a token', async () => {
    const res = await request(server).get('/api/probe-public/ping').expect(200);
    expect(res.body).to.deep.equal({ pong: true });
    expect(res.headers).not.to.have.property('x-ratelimit-limit');
  });
});
