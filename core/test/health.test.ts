import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend, createTestEngine, createTenant } from '../src/testing';
import { Engine, SERVICES } from '../src';
import { createJobQueues, defineJob } from '../src/queue';
import type { JobQueues } from '../src/queue/types';
import { probePlugin } from './support/probe-plugin';

/** A queue a loaded module defines, as a plugin's jobs do. */
const ELSEWHERE = defineJob<Record<string, never>>('metrics-defined-elsewhere');

describeEachBackend('health, readiness and metrics', (backend) => {
  let engine: Engine;
  before(async () => {
    engine = await createTestEngine(backend(), { plugins: [probePlugin], env: { RATE_LIMIT_SCALE: '100' } });
  });
  after(() => engine.close());

  it('answers /health and /ready with every dependency checked', async () => {
    const app = engine.http().callback();
    expect((await request(app).get('/health').expect(200)).body).to.deep.equal({
      status: 'ok',
      version: engine.config.version,
    });
    const ready = await request(app).get('/ready').expect(200);
    expect(ready.body.checks).to.deep.equal(backend().redisUrl ? { database: 'ok', redis: 'ok' } : { database: 'ok' });
  });

  it('answers /ready 503 within its deadline while the database stalls (it waited for the query for minutes)', async () => {
    const app = engine.http().callback();
    const raw = Object.getOwnPropertyDescriptor(engine.knex, 'raw')!;
    // A query the database never answers, as behind a network that drops its packets.
    Object.defineProperty(engine.knex, 'raw', { ...raw, value: () => new Promise(() => undefined) });
    try {
      const started = Date.now();
      const ready = await request(app).get('/ready').expect(503);
      expect(ready.body.checks.database).to.equal('the database does not answer');
      expect(Date.now() - started).to.be.below(5_000);
    } finally {
      Object.defineProperty(engine.knex, 'raw', raw);
    }
    await request(app).get('/ready').expect(200);
  }).timeout(30_000);

  it('counts requests by route and status, and reports queue depths', async () => {
    const app = engine.http().callback();
    const tenant = await createTenant(engine);
    await request(app).get('/api/probe/things/5').set(tenant.auth).expect(200);
    await request(app).get('/api/probe/things/6').set(tenant.auth).expect(200);
    await engine.container.resolve<JobQueues>(SERVICES.Queues).get('metrics-probe').add({}, { delayMs: 60_000 });
    const text = (await request(app).get('/metrics').expect(200)).text;
    expect(text).to.match(
      /switchboard_http_requests_total\{method="GET",route="\/api\/probe\/things\/:id",status="200"\} 2/,
    );
    expect(text).to.contain('switchboard_http_request_duration_seconds_bucket');
    expect(text).to.match(/switchboard_queue_jobs\{queue="metrics-probe",state="delayed"\} 1/);
  });

  it('reports the depth of every queue the plugins define, also one this process never opened', async () => {
    const queues = engine.container.resolve<JobQueues>(SERVICES.Queues);
    expect(queues.names()).to.not.include(ELSEWHERE.queue);
    // Another process (a worker) queues a job; this one (an API process) only reports on the queue.
    const worker = backend().redisUrl
      ? createJobQueues({ redisUrl: backend().redisUrl, prefix: engine.config.redisPrefix })
      : null;
    try {
      await worker?.get(ELSEWHERE).add({}, { delayMs: 60_000 });
      const text = (await request(engine.http().callback()).get('/metrics').expect(200)).text;
      // In process, a queue never opened here holds nothing; on Redis its keys are read.
      expect(text).to.match(
        new RegExp(`switchboard_queue_jobs\\{queue="${ELSEWHERE.queue}",state="delayed"\\} ${worker ? 1 : 0}\\n`),
      );
      expect(queues.names(), 'read without opening it').to.not.include(ELSEWHERE.queue);
    } finally {
      await worker?.closeAll();
    }
  });

  it('answers /ready with 503 once the database is gone', async () => {
    const doomed = await createTestEngine(backend(), { plugins: [probePlugin], migrate: false });
    await doomed.knex.destroy();
    const res = await request(doomed.http().callback()).get('/ready').expect(503);
    expect(res.body.status).to.equal('not ready');
    expect(res.body.checks.database).not.to.equal('ok');
  });
});
