import { expect } from 'chai';
import { definePlugin } from '../src';
import { createTestEngine, createTenant, embeddedBackend, TestBackend, waitFor } from '../src/testing';
import { probePlugin, slowHandlers } from './support/probe-plugin';

describe('graceful shutdown', () => {
  let backend: TestBackend;
  before(() => {
    backend = embeddedBackend();
  });
  after(() => backend.dispose());

  it('finishes in-flight requests, then refuses new connections', async () => {
    const engine = await createTestEngine(backend, { plugins: [probePlugin], overrides: { port: 0 } });
    const tenant = await createTenant(engine);
    const server = await engine.listen();
    const { port } = server.address() as { port: number };
    const started = slowHandlers.started;
    const inFlight = fetch(`http://127.0.0.1:${port}/api/probe/slow`, { headers: tenant.auth });
    // Closing once the request is being handled (on a busy host it may take longer than any fixed pause).
    await waitFor(() => slowHandlers.started > started, 10_000);
    const closing = engine.close();
    const res = await inFlight;
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { data: unknown }).data).to.deep.equal({ slow: true });
    await closing;
    let refused = false;
    await fetch(`http://127.0.0.1:${port}/health`).catch(() => (refused = true));
    expect(refused).to.equal(true);
  });

  it('ends within its timeout when a scheduled task never does (Redis gone, its commands held for ever)', async () => {
    let started = 0;
    const hanging = definePlugin({
      id: 'hanging',
      version: '1.0',
      recurring: () => [
        { name: 'hang', cron: '* * * * * *', run: () => ((started += 1), new Promise(() => undefined)) },
      ],
    });
    const engine = await createTestEngine(backend, {
      plugins: [hanging],
      overrides: { port: 0, shutdownTimeoutMs: 1_000 },
    });
    engine.startScheduler();
    await waitFor(() => started > 0, 10_000);
    const closing = Date.now();
    await engine.close();
    // 1 s of the timeout is spent, then the scheduler's own 2 s at least: well under the task's never.
    expect(Date.now() - closing).to.be.below(5_000);
  }).timeout(30_000);
});
