import { expect } from 'chai';
import request from 'supertest';
import type { Engine } from '@switchboard/core';
import { createTestEngine, embeddedBackend } from '@switchboard/core/testing';
import { PrivateRedis } from '../faults/support/private-redis';
import { runCli, cliEnv } from '../src/cli';

/**
 * Redis gone away (a review's findings, session 26): a process that needs it says so within its deadline
 * instead of waiting forever, `/ready` answers 503 naming it, and a process asked to stop stops.
 */
describe('faults: Redis away [private redis]', function () {
  let redis: PrivateRedis;
  let engine: Engine | undefined;
  before(async function () {
    this.timeout(60_000);
    redis = await PrivateRedis.start();
  });
  after(async () => {
    await redis?.dispose();
  });

  it('fails a command at once, saying so, when Redis refuses it (a database index it lacks)', async function () {
    this.timeout(60_000);
    const env = { ...cliEnv(embeddedBackend(), 'users-projects'), REDIS_URL: `${redis.url}/99` };
    const run = await runCli(['org:create', '--name', 'Nobody'], env, 30_000);
    expect(run.code).to.equal(1);
    // Said from Redis's first refusal: it was retried for 10 s, then said to be "not answering".
    expect(run.stderr).to.contain('Error: Redis at REDIS_URL refuses this process: ERR DB index is out of range');
    expect(run.stderr).to.not.contain('does not answer');
  });

  it('answers /ready 503 naming Redis once it went, and still stops within its time', async function () {
    this.timeout(60_000);
    engine = await createTestEngine(embeddedBackend(), { env: { REDIS_URL: redis.url } });
    const app = engine.http().callback();
    await request(app).get('/ready').expect(200);
    await redis.kill();
    const started = Date.now();
    const ready = await request(app).get('/ready').expect(503);
    expect(Date.now() - started).to.be.below(10_000);
    expect(JSON.stringify(ready.body)).to.match(/redis/i);
    // /metrics answers too, without the queues' gauges (it waited for Redis to come back; session 27).
    const scraped = Date.now();
    const metrics = await request(app).get('/metrics').expect(200);
    expect(Date.now() - scraped).to.be.below(20_000);
    expect(metrics.text).to.contain('switchboard_process_cpu_seconds_total');
    const stopping = Date.now();
    await engine.close();
    expect(Date.now() - stopping).to.be.below(15_000);
  });

  it('fails a command with Redis named when Redis does not answer, instead of waiting forever', async function () {
    this.timeout(90_000);
    // The Redis above is killed: its port refuses connections now.
    const env = { ...cliEnv(embeddedBackend(), 'users-projects'), REDIS_URL: redis.url };
    const started = Date.now();
    const run = await runCli(['org:create', '--name', 'Nobody'], env, 60_000);
    expect(run.code).to.not.equal(0);
    expect(run.stderr).to.match(/Redis at REDIS_URL does not answer within 10 s/);
    expect(Date.now() - started).to.be.below(45_000);
  });
});
