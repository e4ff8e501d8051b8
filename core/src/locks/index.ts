import type { RedisClientType } from 'redis';
import { MemoryLocks } from './memory-locks';
import { RedisLocks } from './redis-locks';
import type { Locks } from './types';

export * from './types';

export function createLocks(options: { redis: RedisClientType | null; prefix: string }): Locks {
  return options.redis ? new RedisLocks(options.redis, options.prefix) : new MemoryLocks();
}
