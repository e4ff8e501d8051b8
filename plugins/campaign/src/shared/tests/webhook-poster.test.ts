import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { OutboundGuard } from '@switchboard/core';
import { postJson } from '../webhook-poster';

const TIMEOUT_MS = 300;

describe("campaign: a webhook POST's bounds", () => {
  let server: http.Server;
  let base = '';
  const guard = new OutboundGuard({ appEnv: 'local', env: {} });
  const post = (path: string) =>
    postJson(`${base}${path}`, { 'content-type': 'application/json' }, '{}', { guard, timeoutMs: TIMEOUT_MS });
  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      if (req.url === '/ok') return void res.writeHead(204).end();
      if (req.url === '/gone') return void res.writeHead(410).end('gone');
      if (req.url === '/big') return void res.writeHead(200).end('x'.repeat(1024 * 1024));
      if (req.url === '/hang') return;
      if (req.url === '/hang-body') return void res.writeHead(200).write('partial');
      if (req.url === '/close') return void req.socket.destroy();
      if (req.url === '/reset') {
        res.writeHead(200, { 'content-length': '100' }).write('partial');
        setTimeout(() => req.socket.destroy(), 20);
        return;
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    server.close();
    await guard.close();
  });

  it("answers the receiver's status, whatever it is", async () => {
    expect(await post('/ok')).to.include({ status: 204, error: null });
    expect(await post('/gone')).to.include({ status: 410, error: null });
  });

  it('reads at most 64 KiB of an answer: a longer one is answered all the same', async () => {
    expect(await post('/big')).to.include({ status: 200, error: null });
  });

  it('ends a try with no answer within the time limit; one whose body stops has answered its status', async () => {
    for (const [path, outcome] of [
      ['/hang', { status: null, error: `no answer within ${TIMEOUT_MS} ms` }],
      ['/hang-body', { status: 200, error: null }],
    ] as const) {
      const started = Date.now();
      expect(await post(path), path).to.include(outcome);
      // Near the limit: a busy machine may fire the timer late, a try without one would wait for ever.
      expect(Date.now() - started).to.be.below(TIMEOUT_MS + 1_000);
    }
  });

  it('takes the status of an answer cut short in its body; fails a connection closed before any status', async () => {
    expect(await post('/reset')).to.include({ status: 200, error: null });
    const closed = await post('/close');
    expect(closed.status).to.equal(null);
    expect(closed.error)
      .to.be.a('string')
      .and.not.match(/no answer within/);
  });

  it('refuses a private address outside a developer machine, on the url and on the connection', async () => {
    const production = new OutboundGuard({ appEnv: 'production', env: {} });
    try {
      const outcome = await postJson(`${base}/ok`, {}, '{}', { guard: production, timeoutMs: TIMEOUT_MS });
      expect(outcome).to.include({ status: null, refused: true });
      const byName = await postJson(`http://localhost:${base.split(':')[2]}/ok`, {}, '{}', {
        guard: production,
        timeoutMs: TIMEOUT_MS,
      });
      expect(byName).to.include({ status: null, error: 'getaddrinfo ENOTFOUND localhost' });
      expect(byName.refused).to.equal(undefined);
    } finally {
      await production.close();
    }
  });
});
