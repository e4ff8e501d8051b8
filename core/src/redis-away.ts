import { withinDeadline } from './deadline';

/**
 * Redis did not answer a command within its deadline: away (node-redis holds commands while disconnected)
 * or stalled (a connection whose packets are dropped is never answered). A request meeting it is answered
 * 503, as for a database away.
 */
export class RedisAwayError extends Error {
  readonly code = 'REDIS_AWAY';
}

export const isRedisAway = (err: unknown): boolean => err instanceof RedisAwayError;

/** The work's answer, or RedisAwayError saying `message` once `ms` have passed without one. */
export const withinRedisDeadline = <T>(work: Promise<T>, ms: number, message: string): Promise<T> =>
  withinDeadline(work, ms, () => new RedisAwayError(message));
