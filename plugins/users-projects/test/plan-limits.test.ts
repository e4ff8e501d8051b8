import { expect } from 'chai';
import request from 'supertest';
import type { Server } from 'node:http';
import type { Engine } from '@switchboard/core';
import { describeEachBackend, createTestEngine, createTenant } from '@switchboard/core/testing';
import usersProjects from '../src';

describeEachBackend('users-projects: the spec limits hold for every plan', (backend) => {
  let engine: Engine;
  let server: Server;

  before(async () => {
    engine = await createTestEngine(backend(), { plugins: [usersProjects] });
    server = engine.http().listen(0);
  });
  after(async () => {
    server.close();
    await engine.close();
  });

  it('allows a pro organization 100 requests a minute, as the spec says', async () => {
    const pro = await createTenant(engine, { plan: 'pro' });
    const first = await request(server).get('/api/v1/users').set(pro.auth).expect(200);
    expect(first.headers['x-ratelimit-limit']).to.equal('100');
    expect(first.headers['x-ratelimit-remaining']).to.equal('99');
    for (let i = 1; i < 100; i++) await request(server).get('/api/v1/users').set(pro.auth).expect(200);
    await request(server).get('/api/v1/users').set(pro.auth).expect(429);
  });
});
