import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import type { Engine } from '@switchboard/core';
import { createTestEngine, createTenant, describeEachBackend, recordingLogger } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import monitor from '@switchboard/plugin-server-monitor';
import usersProjects from '@switchboard/plugin-users-projects';

/** issue 26: at LOG_LEVEL=debug every request is logged, and no secret it carried is. */
describeEachBackend('no secret in the logs', (backend) => {
  const log = recordingLogger('debug');
  const appKey = crypto.randomBytes(32).toString('base64');
  const monitorKey = `monitor-key-${crypto.randomBytes(12).toString('hex')}`;
  let engine: Engine;
  before(async () => {
    engine = await createTestEngine(backend(), {
      plugins: [usersProjects, campaign, monitor],
      env: { APP_KEY: appKey, SERVER_MONITOR_API_KEY: monitorKey, RATE_LIMIT_SCALE: '1000' },
      logger: log.logger,
    });
  });
  after(async () => {
    await engine.close();
  });

  it('logs each request by its route, without its token, query, key, path secrets or body', async () => {
    const tenant = await createTenant(engine);
    const http = request(engine.http().callback());
    const linkToken = `1.2.${crypto.randomBytes(16).toString('base64url')}`;
    const pingToken = `ping-${crypto.randomBytes(12).toString('hex')}`;
    const password = `pw-${crypto.randomBytes(8).toString('hex')}`;
    const webhookSecret = `whsec-${crypto.randomBytes(12).toString('hex')}`;

    await http.get('/api/v1/users').set(tenant.auth).expect(200);
    await http.get('/api/v1/users').set('Authorization', 'Bearer sb_not-a-real-token-at-all').expect(401);
    await http.get(`/api/campaign/unsubscribe?token=${linkToken}`).expect(404);
    await http.get(`/api/servermonitor/worker-status/${monitorKey}`).expect(200);
    await http.get(`/api/servermonitor/ping/${pingToken}`).expect(404);
    await http
      .post('/api/servermonitor/servers')
      .set(tenant.auth)
      .send({ title: 'Secret endpoint', endpoint: `https://ops:${password}@example.com/health` })
      .expect(201);
    await http
      .post('/api/campaign/webhooks')
      .set(tenant.auth)
      .send({ name: 'Signed', url: 'https://hooks.example/in', events: ['sent'], secret: webhookSecret })
      .expect(201);

    const requests = log.entries.filter((e) => e.msg === 'request');
    expect(requests.length).to.be.at.least(7);
    expect(requests.map((e) => (e as unknown as { route: string }).route)).to.include.members([
      '/api/v1/users',
      '/api/campaign/unsubscribe',
      '/api/servermonitor/worker-status/:key',
    ]);
    const logged = JSON.stringify(log.entries);
    for (const secret of [
      tenant.token,
      'sb_not-a-real-token',
      linkToken,
      monitorKey,
      pingToken,
      password,
      webhookSecret,
      appKey,
    ])
      expect(logged, 'a secret was logged').not.to.contain(secret);
  });
});
