import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createTestEngine, createTenant, describeEachBackend, recordingLogger, waitFor } from '../src/testing';
import { probePlugin, rowsHandlers } from './support/probe-plugin';

interface Answer {
  status: number;
  connection?: string;
  body: string;
}

/** GET over the agent's keep-alive connections; `abandonAfterMs` destroys the request before its answer. */
function get(
  port: number,
  path: string,
  agent: http.Agent,
  auth: Record<string, string>,
  abandonAfterMs?: number,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent, headers: auth }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (abandonAfterMs !== undefined) setTimeout(() => req.destroy(new Error('abandoned')), abandonAfterMs);
  });
}

const isShutdownAnswer = (a: Answer) =>
  a.status === 503 && a.connection === 'close' && JSON.parse(a.body).error?.code === 'SERVICE_UNAVAILABLE';

describeEachBackend('shutdown under load on keep-alive connections', (backend) => {
  it('answers every request 2xx or the 503 envelope, lets in-flight requests finish, then closes', async () => {
    const log = recordingLogger();
    const engine = await createTestEngine(backend(), {
      plugins: [probePlugin],
      env: { RATE_LIMIT_SCALE: '100000' },
      overrides: { port: 0 },
      logger: log.logger,
    });
    const tenant = await createTenant(engine);
    const { port } = (await engine.listen()).address() as AddressInfo;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 6 });
    let closing = false;
    const answered: number[] = [];
    const problems: string[] = [];

    // Senders reuse their connections without pause; every third request waits 150 ms before its query.
    const sender = async (n: number) => {
      for (let i = 0; ; i += 1) {
        try {
          const answer = await get(port, `/api/probe/rows/${i % 3 === 0 ? 150 : 1}`, agent, tenant.auth);
          answered.push(answer.status);
          if (answer.status >= 200 && answer.status < 300) continue;
          if (!isShutdownAnswer(answer)) problems.push(`sender ${n}: ${answer.status} ${answer.body}`);
          return;
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
          // Once closing, a connection may be closed under a request not yet read, and new ones are refused.
          if (!closing || !['ECONNRESET', 'ECONNREFUSED', 'EPIPE'].includes(code))
            problems.push(`sender ${n}: ${code}`);
          return;
        }
      }
    };
    const senders = Array.from({ length: 4 }, (_, n) => sender(n));
    await waitFor(() => answered.length >= 30);

    // In flight when the close begins: a request that waits 300 ms before its query, and two that wait
    // 500 ms but whose clients hang up first (as a load generator does when its time is up).
    const seen = rowsHandlers.started.length;
    const inFlight = get(port, '/api/probe/rows/300', agent, tenant.auth);
    const abandoned = [1, 2].map(() =>
      get(port, '/api/probe/rows/500', new http.Agent({ keepAlive: true }), tenant.auth, 50).catch(() => 'gone'),
    );
    // The close begins once the 300 ms request is being handled (a fixed pause, on a busy host, may not be).
    await waitFor(() => rowsHandlers.started.slice(seen).includes(300), 10_000);
    // The abandoned two too, as far as they get read: on a busy host a client may hang up before its request is.
    await waitFor(() => rowsHandlers.started.slice(seen).filter((id) => id === 500).length === 2, 2_000).catch(
      () => undefined,
    );
    closing = true;
    await engine.close();
    // Nothing ran on after the pools closed: the abandoned requests' handlers had finished too.
    expect(rowsHandlers.running).to.equal(0);
    const last = await inFlight;
    await Promise.all([...senders, ...abandoned]);
    agent.destroy();

    expect(problems).to.deep.equal([]);
    expect(last.status, last.body).to.equal(200);
    expect(JSON.parse(last.body).data).to.deep.equal({ organization_id: tenant.organizationId });
    expect(answered.every((s) => (s >= 200 && s < 300) || s === 503)).to.equal(true);
    expect(log.errors()).to.deep.equal([]);
  });

  it('answers a request that arrives on an open connection while closing with 503 and Connection: close', async () => {
    const engine = await createTestEngine(backend(), { plugins: [probePlugin], overrides: { port: 0 } });
    const tenant = await createTenant(engine);
    const { port } = (await engine.listen()).address() as AddressInfo;
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    const ended = new Promise((resolve) => socket.once('close', resolve));
    // The request has begun arriving when the close starts; its last header comes after.
    socket.write('GET /api/probe/things/7 HTTP/1.1\r\nHost: localhost\r\nConnection: keep-alive\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closed = engine.close();
    socket.write(`Authorization: ${tenant.auth.Authorization}\r\n\r\n`);
    await ended;
    await closed;
    const [head, body] = received.split('\r\n\r\n');
    expect(head).to.match(/^HTTP\/1\.1 503 /);
    expect(head).to.match(/\r\nconnection: close\r\n/i);
    expect(head).to.match(/\r\nretry-after: 2\r\n/i);
    expect(JSON.parse(body)).to.deep.equal({
      success: false,
      error: { code: 'SERVICE_UNAVAILABLE', message: 'The server is shutting down: send the request again' },
    });
  });
});
