import crypto from 'node:crypto';
import type { RedisClientType } from 'redis';
import type { LockHandle, Locks } from './types';
import { loadOnFirstUse } from '../load-on-first-use';
import { RedisAwayError, withinRedisDeadline } from '../redis-away';

const redisModule = loadOnFirstUse(() => require('redis') as typeof import('redis'));

// Release and extend only while the stored token is still ours, atomically.
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;
const EXTEND = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const CONNECT_TIMEOUT_MS = 2000;
/**
 * A lock command Redis has not answered by then fails (RedisAwayError): node-redis holds commands while
 * disconnected and never hears back on a stalled connection, which held a provider's webhook request (its
 * one-time token) and a recurring task for as long as the outage lasted (session 36).
 */
export const LOCK_COMMAND_MS = 2000;

/** Locks across processes: SET NX PX with a random token per holder. */
export class RedisLocks implements Locks {
  readonly durable = true;
  private connecting?: Promise<unknown>;

  /** With ownsClient the locks connect the client on first use and close it in close(). */
  constructor(
    private readonly redis: RedisClientType,
    private readonly prefix: string,
    private readonly ownsClient = false,
  ) {}

  /** Locks on a client of their own; commands fail at once while Redis is away, so acquire never waits. */
  static fromUrl(url: string, prefix: string, onError: (err: Error) => void = () => undefined): RedisLocks {
    const client = redisModule().createClient({ url, disableOfflineQueue: true }) as RedisClientType;
    client.on('error', onError);
    return new RedisLocks(client, prefix, true);
  }

  async acquire(key: string, ttlMs: number): Promise<LockHandle | null> {
    await this.ready();
    const redisKey = `${this.prefix}:lock:${key}`;
    const token = crypto.randomUUID();
    const ok = await answered(
      this.redis.set(redisKey, token, {
        condition: 'NX',
        expiration: { type: 'PX', value: wholeMs(ttlMs) },
      }),
    );
    if (ok !== 'OK') return null;
    return {
      key,
      release: async () => {
        await answered(this.redis.eval(RELEASE, { keys: [redisKey], arguments: [token] }));
      },
      extend: async (ms: number) =>
        Number(
          await answered(this.redis.eval(EXTEND, { keys: [redisKey], arguments: [token, String(wholeMs(ms))] })),
        ) === 1,
    };
  }

  async close(): Promise<void> {
    // A borrowed client belongs to whoever made it.
    if (!this.ownsClient) return;
    if (this.redis.isReady) await this.redis.close();
    else if (this.redis.isOpen) this.redis.destroy();
  }

  private async ready(): Promise<void> {
    if (!this.ownsClient || this.redis.isReady) return;
    // node-redis keeps retrying a first connection forever; callers get an error after a deadline.
    this.connecting ??= this.redis.connect();
    await withinRedisDeadline(this.connecting, CONNECT_TIMEOUT_MS, 'redis for locks does not answer');
  }
}

const wholeMs = (ms: number) => Math.max(1, Math.round(ms));

/**
 * A lock command's answer within LOCK_COMMAND_MS. Anything but Redis's own reply (an error it answered) is
 * Redis away: no answer in time, or node-redis refusing at once (offline, closed, the socket gone).
 */
const answered = <T>(command: Promise<T>): Promise<T> =>
  withinRedisDeadline(
    command,
    LOCK_COMMAND_MS,
    `redis did not answer a lock command within ${LOCK_COMMAND_MS / 1000} s`,
  ).catch((err: unknown) => {
    if (err instanceof RedisAwayError || err instanceof redisModule().ErrorReply) throw err;
    throw new RedisAwayError(`redis cannot take a lock command: ${(err as Error)?.message ?? String(err)}`);
  });
