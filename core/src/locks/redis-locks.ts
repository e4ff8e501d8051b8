import crypto from 'node:crypto';
import type { RedisClientType } from 'redis';
import type { LockHandle, Locks } from './types';

// Release and extend only while the stored token is still ours, atomically.
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;

/** Locks across processes: SET NX PX with a random token per holder. */
export class RedisLocks implements Locks {
  constructor(
    private readonly redis: RedisClientType,
    private readonly prefix: string,
  ) {}

  async acquire(key: string, ttlMs: number): Promise<LockHandle | null> {
    const redisKey = `${this.prefix}:lock:${key}`;
    const token = crypto.randomUUID();
    const ok = await this.redis.set(redisKey, token, { condition: 'NX', expiration: { type: 'PX', value: ttlMs } });
    if (ok !== 'OK') return null;
    return {
      key,
      release: async () => {
        await this.redis.eval(RELEASE, { keys: [redisKey], arguments: [token] });
      },
      extend: async (ms: number) =>
        Number(await this.redis.eval(EXTEND, { keys: [redisKey], arguments: [token, String(ms)] })) === 1,
    };
  }

  async close(): Promise<void> {
    // The Redis client belongs to the engine, which closes it.
  }
}
