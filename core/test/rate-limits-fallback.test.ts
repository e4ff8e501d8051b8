import net from 'node:net';
import { expect } from 'chai';
import { createClient, RedisClientType } from 'redis';
import { RateLimits } from '../src/http/rate-limits';
import { loadConfig } from '../src';

describe('rate limits while Redis is unreachable', () => {
  it('keep counting in process memory instead of failing or hanging the request', async () => {
    const disconnected = createClient({ url: 'redis://127.0.0.1:1' }) as RedisClientType;
    const limits = new RateLimits(loadConfig({ env: {}, file: false }), disconnected);
    const policy = { windowSeconds: 60, perToken: { overall: 2 }, perAddress: 2 };
    const auth = { tokenId: 1, organizationId: 1, plan: 'free' as const, permissions: ['*'] };
    const first = await limits.consume('p', policy, 'GET', auth, '127.0.0.1');
    const second = await limits.consume('p', policy, 'GET', auth, '127.0.0.1');
    const third = await limits.consume('p', policy, 'GET', auth, '127.0.0.1');
    expect([first.remaining, second.remaining]).to.deep.equal([1, 0]);
    expect(third.retryAfter).to.be.a('number').and.be.at.least(1);
  });

  it('count in memory within half a second when Redis takes the connection and answers nothing (it hung for ever)', async () => {
    // A Redis that stalls: the handshake's commands answered OK, every command after it never.
    let stalling = false;
    const stalled = net.createServer((socket) => {
      socket.on('data', (data) => {
        if (stalling) return;
        const commands = data
          .toString()
          .split('\r\n')
          .filter((line) => line.startsWith('*')).length;
        socket.write('+OK\r\n'.repeat(commands));
      });
    });
    await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
    const { port } = stalled.address() as net.AddressInfo;
    const client = createClient({ url: `redis://127.0.0.1:${port}`, RESP: 2 }) as RedisClientType;
    client.on('error', () => undefined);
    try {
      await client.connect();
      stalling = true;
      const limits = new RateLimits(loadConfig({ env: {}, file: false }), client);
      const policy = { windowSeconds: 60, perToken: { overall: 2 }, perAddress: 2 };
      const started = Date.now();
      const counted = await Promise.all([1, 2].map(() => limits.consume('p', policy, 'GET', null, '192.0.2.9')));
      expect(Date.now() - started).to.be.below(3_000);
      expect(counted.map((c) => c.remaining).sort()).to.deep.equal([0, 1]);
      // Given back where it was counted (memory): one place free again.
      await counted[0].giveBack();
      // The stalled commands fail at last (the connection dropped): nothing is counted a second time (the
      // limiter's own insurance counted each again in memory, and this request was refused).
      client.destroy();
      await new Promise((resolve) => setImmediate(resolve));
      const after = await limits.consume('p', policy, 'GET', null, '192.0.2.9');
      expect([after.retryAfter, after.remaining]).to.deep.equal([undefined, 0]);
    } finally {
      if (client.isOpen) client.destroy();
      stalled.close();
    }
  }).timeout(30_000);
});
