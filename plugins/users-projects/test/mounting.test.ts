import { expect } from 'chai';
import request from 'supertest';
import type { Engine } from '@switchboard/core';
import { createTestEngine, createTenant, embeddedBackend, TestBackend } from '@switchboard/core/testing';
import usersProjects from '../src';

describe('users-projects: base path and limits', () => {
  let backend: TestBackend;
  const engines: Engine[] = [];
  before(() => {
    backend = embeddedBackend();
  });
  after(async () => {
    for (const e of engines) await e.close();
    await backend.dispose();
  });
  const start = async (env: Record<string, string>, migrate = true) => {
    const engine = await createTestEngine(backend, { plugins: [usersProjects], env, migrate });
    engines.push(engine);
    return engine;
  };

  it('serves /api/v1 in the local environment and /v1 in staging and production', async () => {
    const local = await start({ APP_ENV: 'local' });
    const tenant = await createTenant(local);
    await request(local.http().callback()).get('/api/v1/users').set(tenant.auth).expect(200);
    await request(local.http().callback()).get('/v1/users').set(tenant.auth).expect(404);
    for (const env of ['staging', 'production']) {
      const engine = await start({ APP_ENV: env }, false);
      await request(engine.http().callback()).get('/v1/users').set(tenant.auth).expect(200);
      await request(engine.http().callback()).get('/api/v1/users').set(tenant.auth).expect(404);
    }
  });

  it('allows 100 requests a minute per token and 10 without a valid token', async () => {
    const engine = await start({}, false);
    const tenant = await createTenant(engine);
    const app = engine.http().callback();
    const first = await request(app).get('/api/v1/users').set(tenant.auth).expect(200);
    expect(first.headers['x-ratelimit-limit']).to.equal('100');
    expect(first.headers['x-ratelimit-remaining']).to.equal('99');
    const anon = await request(app).get('/api/v1/users').expect(401);
    expect(anon.headers['x-ratelimit-limit']).to.equal('10');
    // The router takes a path in capitals too: it is guarded and counted alike, and a token works there.
    const loud = await request(app).get('/API/V1/USERS').expect(401);
    expect(loud.headers['x-ratelimit-remaining']).to.equal('8');
    await request(app).get('/API/V1/users').set(tenant.auth).expect(200);
    for (let i = 0; i < 8; i++) await request(app).get('/api/v1/users').expect(401);
    await request(app).get('/api/v1/users').expect(429);
  });

  it('documents every route in the OpenAPI document', async () => {
    const engine = await start({}, false);
    const doc = (await request(engine.http().callback()).get('/api/openapi.json').expect(200)).body;
    expect(doc.openapi).to.equal('3.1.0');
    expect(Object.keys(doc.paths)).to.include.members([
      '/api/v1/users',
      '/api/v1/users/{id}',
      '/api/v1/projects',
      '/api/v1/projects/{id}',
    ]);
    expect(Object.keys(doc.paths['/api/v1/users/{id}'])).to.have.members(['get', 'put', 'delete']);
    expect(doc.paths['/api/v1/users'].post.requestBody.content['application/json'].schema.required).to.deep.equal([
      'name',
      'email',
    ]);
  });
});
