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
});
