import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { OutboundGuard } from '@switchboard/core';
import { remoteTextThrough } from '../remote-text';

describe('campaign: reading a provider URL (SNS certificates and confirmations)', () => {
  let server: http.Server;
  let base = '';
  const guard = new OutboundGuard({ appEnv: 'local', env: {} });
  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === '/big') return res.end('x'.repeat(65 * 1024));
      if (req.url === '/moved') {
        res.writeHead(302, { location: '/cert' });
        return res.end();
      }
      res.end('-----BEGIN CERTIFICATE-----');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.close();
    await guard.close();
  });

  it('reads the text through the outbound guard, at most 64 KiB, following no redirect', async () => {
    const read = remoteTextThrough(guard);
    expect(await read(`${base}/cert`)).to.equal('-----BEGIN CERTIFICATE-----');
    const big = await read(`${base}/big`).catch((err: Error & { code?: string }) => err);
    expect(big).to.include({ code: 'SERVICE_UNAVAILABLE' });
    expect((big as Error).message).to.contain('answered more than 65536 bytes');
    const moved = await read(`${base}/moved`).catch((err: Error) => err);
    expect((moved as Error).message).to.contain('answered 302');
  });

  it('refuses a private address outside a developer machine', async () => {
    const production = new OutboundGuard({ appEnv: 'production', env: {} });
    try {
      const refused = await remoteTextThrough(production)(`${base}/cert`).catch((err: Error) => err);
      expect((refused as Error).message).to.contain('private or loopback address (127.0.0.1)');
    } finally {
      await production.close();
    }
  });
});
