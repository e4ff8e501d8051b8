import { expect } from 'chai';
import type { Server } from 'node:http';
import type { Engine } from '@switchboard/core';
import { apiClient, createTestEngine, createTenant, describeEachBackend } from '@switchboard/core/testing';
import campaign from '../..';
import { CAMPAIGN_API_PREFIX } from '../paths';

describeEachBackend('campaign: the spec limits hold for every plan', (backend) => {
  let engine: Engine;
  let server: Server;

  before(async () => {
    engine = await createTestEngine(backend(), { plugins: [campaign] });
    server = engine.http().listen(0);
  });
  after(async () => {
    server.close();
    await engine.close();
  });

  it('allows a pro organization 1000 requests an hour, GET 500 and DELETE 50, as the spec says', async () => {
    const api = apiClient(server, CAMPAIGN_API_PREFIX, await createTenant(engine, { plan: 'pro' }));
    const get = await api.get('/lists').expect(200);
    expect(get.headers['x-ratelimit-limit']).to.equal('500');
    const post = await api.post('/lists', { name: 'Gone', code: 'gone' }).expect(201);
    expect(post.headers['x-ratelimit-limit']).to.equal('100');
    const put = await api.put(`/lists/${post.body.data.id}`, { name: 'Still gone' }).expect(200);
    expect(put.headers['x-ratelimit-limit']).to.equal('1000');

    const first = await api.delete(`/lists/${post.body.data.id}`).expect(200);
    expect(first.headers['x-ratelimit-limit']).to.equal('50');
    expect(first.headers['x-ratelimit-remaining']).to.equal('49');
    for (let i = 1; i < 50; i++) await api.delete('/lists/999999').expect(404);
    const over = await api.delete('/lists/999999').expect(429);
    expect(over.headers['x-ratelimit-limit']).to.equal('50');
  });
});
