import { isRedisAway } from '../redis-away';
import type { QueueLogger } from './types';

/**
 * Queues work the database holds too (a sweep, a watchdog or a recurring task finds it there again): a
 * Redis that does not take the job in time (RedisAwayError) is logged, not thrown, so the request that made
 * the work is answered and the work waits for its sweep. Whether it was queued; other errors are thrown.
 */
export async function queueSoon(add: Promise<unknown>, log: QueueLogger | undefined, what: string): Promise<boolean> {
  try {
    await add;
    return true;
  } catch (err) {
    if (!isRedisAway(err)) throw err;
    log?.warn({ err: (err as Error).message }, `${what} not queued (Redis away): found again in the database later`);
    return false;
  }
}

/**
 * queueSoon for each item in turn, up to the first that Redis does not take: the rest are found again with it
 * (each would wait its own deadline on the same Redis). Whether every one was queued.
 */
export async function queueEachSoon<T>(
  items: readonly T[],
  add: (item: T) => Promise<unknown>,
  log: QueueLogger | undefined,
  what: string,
): Promise<boolean> {
  for (const item of items) if (!(await queueSoon(add(item), log, what))) return false;
  return true;
}
