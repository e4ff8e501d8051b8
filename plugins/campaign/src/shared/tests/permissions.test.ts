import { expect } from 'chai';
import request from 'supertest';
import { createTenant, embeddedBackend, TestBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from './support';

describe('campaign: permissions and documentation of every route', () => {
  let backend: TestBackend;
  let f: CampaignFixture;
  before(async () => {
    backend = embeddedBackend();
    f = await campaignFixture(backend);
  });
  after(async () => {
    await f.close();
    await backend.dispose();
  });

  const routes: Array<[string, string, string]> = [
    ['get', '/subscribers', 'subscribers:read'],
    ['post', '/subscribers/batch', 'subscribers:write'],
    ['get', '/lists', 'lists:read'],
    ['post', '/lists', 'lists:write'],
    ['get', '/messages', 'messages:read'],
    ['post', '/messages', 'messages:write'],
    ['get', '/schedules', 'schedules:read'],
    ['post', '/schedules', 'schedules:write'],
    ['get', '/sender-profiles', 'sender-profiles:read'],
    ['post', '/sender-profiles', 'sender-profiles:write'],
    ['post', '/changelog/subscribe', 'changelog:write'],
    ['get', '/analytics/dashboard', 'analytics:read'],
    ['get', '/analytics/growth', 'analytics:read'],
    ['get', '/analytics/performance', 'analytics:read'],
    ['get', '/analytics/engagement', 'analytics:read'],
  ];

  it('answers 403 AUTH_INSUFFICIENT_PERMISSIONS to a token without the resource permission', async () => {
    const outsider = await createTenant(f.engine, { permissions: ['inbound-webhooks:read'] });
    for (const [method, path, permission] of routes) {
      const res = await (request(f.server) as any)[method](`/api/campaign${path}`).set(outsider.auth).send({});
      expect(res.status, `${method} ${path}`).to.equal(403);
      expect(res.body.error.message).to.contain(permission);
    }
  });

  it('answers 401 without a token, with rate-limit headers', async () => {
    const res = await request(f.server).get('/api/campaign/subscribers').expect(401);
    expect(res.body.error.code).to.equal('AUTH_INVALID_TOKEN');
    expect(res.headers['x-ratelimit-limit']).to.be.a('string');
  });

  it('lists every campaign route in the OpenAPI document with its permission', async () => {
    const doc = (await request(f.server).get('/api/openapi.json').expect(200)).body;
    for (const [method, path, permission] of routes) {
      expect(doc.paths[`/api/campaign${path}`]?.[method]?.['x-permission'], `${method} ${path}`).to.equal(permission);
    }
    expect(Object.keys(doc.paths['/api/campaign/subscribers/{id}'])).to.have.members(['get', 'put', 'delete']);
    expect(doc.paths['/api/campaign/schedules/{id}/resume'].post.summary).to.contain('next_run_at');
  });
});
