import type { RedisClientType } from 'redis';
import { MemoryLocks } from './memory-locks';
import { RedisLocks } from './redis-locks';
import type { Locks } from './types';

export * from './types';

export interface LocksOptions {
  /** Locks on a Redis client of their own, closed by Locks.close(). */
  redisUrl?: string;
  /** Or on a client the caller owns (and closes); wins over redisUrl. */
  redis?: RedisClientType | null;
  /** Namespace of the lock keys: `<prefix>:lock:<key>`. */
  prefix: string;
  logger?: { warn(obj: unknown, msg?: string): void };
}

/** Redis locks when a client or URL is given, else locks inside this process. */
export function createLocks(options: LocksOptions): Locks {
  if (options.redis) return new RedisLocks(options.redis, options.prefix);
  if (options.redisUrl)
    return RedisLocks.fromUrl(options.redisUrl, options.prefix, (err) =>
      options.logger?.warn({ err }, 'redis for locks'),
    );
  return new MemoryLocks();
}
