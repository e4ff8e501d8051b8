import { expect } from 'chai';
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
});
