import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RedisClientType } from 'redis';
import type { AppConfig, RateLimitPolicy } from '../config/types';
import type { AuthContext } from '../auth/api-tokens';
import { withinDeadline } from '../deadline';

/**
 * How long a request waits for Redis to count it before counting it in memory: a Redis that stalls (a
 * connection that takes commands and answers none) held every API request for ever, as the limiter's
 * own fallback covers only a client that knows it is disconnected.
 */
export const RATE_LIMIT_REDIS_MS = 500;
const REDIS_LATE = 'redis did not count the request in time';

export interface LimitState {
  limit: number;
  remaining: number;
  /** Unix time (seconds) at which the window resets. */
  reset: number;
  /** Seconds to wait, when this request is over the limit. */
  retryAfter?: number;
}

/** A counted request: its state, and a way to give its point back. */
export interface Consumed extends LimitState {
  /** Uncounts the request (a 503: the engine, not the client, failed it). */
  giveBack(): Promise<void>;
}

/**
 * Counts requests against a plugin's policy: per token (overall and per method), or per client
 * address for requests without a valid token. In Redis when REDIS_URL is set, so every API
 * process shares the counts; a Redis outage falls back to per-process memory counts.
 */
export class RateLimits {
  private readonly limiters = new Map<string, { limiter: RateLimiterAbstract; memory: RateLimiterMemory }>();

  constructor(
    private readonly config: AppConfig,
    private readonly redis: RedisClientType | null,
  ) {}

  async consume(
    pluginId: string,
    policy: RateLimitPolicy,
    method: string,
    auth: AuthContext | null,
    address: string,
  ): Promise<Consumed> {
    const buckets: Array<{ name: string; points: number; key: string }> = [];
    if (auth) {
      const multiplier = this.multiplier(auth);
      const key = `t${auth.tokenId}`;
      buckets.push({ name: 'all', points: policy.perToken.overall * multiplier, key });
      const perMethod = policy.perToken[method as keyof RateLimitPolicy['perToken']];
      if (perMethod) buckets.push({ name: method, points: perMethod * multiplier, key });
    } else {
      buckets.push({ name: 'anon', points: policy.perAddress * this.config.rateLimitScale, key: `a${address}` });
    }
    const counted = buckets.map((b) => ({
      ...this.limiter(pluginId, b.name, Math.max(1, Math.floor(b.points)), policy.windowSeconds),
      key: b.key,
    }));
    const outcomes = await Promise.all(counted.map((c) => this.consumeOne(c.limiter, c.memory, c.key)));
    const states = outcomes.map((o) => o.state);
    // Given back where it was counted: Redis, or this process's memory when Redis did not answer.
    const giveBack = async () => {
      await Promise.all(
        counted.map((c, i) =>
          withinDeadline(outcomes[i].countedBy.reward(c.key, 1), RATE_LIMIT_REDIS_MS, REDIS_LATE).catch(
            () => undefined,
          ),
        ),
      );
    };
    // The headers describe the bucket closest to its limit; a rejection wins over any success.
    const worst = states.reduce((worst, s) =>
      (s.retryAfter !== undefined) !== (worst.retryAfter !== undefined)
        ? s.retryAfter !== undefined
          ? s
          : worst
        : s.remaining < worst.remaining
          ? s
          : worst,
    );
    return { ...worst, giveBack };
  }

  private multiplier(auth: AuthContext): number {
    const plan = this.config.planRateLimits[auth.plan] ?? 1;
    const token = this.config.tokenRateLimits[String(auth.tokenId)] ?? 1;
    return this.config.rateLimitScale * plan * token;
  }

  /**
   * Counts one request in Redis, or in memory when Redis fails or has not answered within
   * RATE_LIMIT_REDIS_MS. The Redis limiter has no insurance of its own: one that ran when a late command
   * failed at last counted the request in memory a second time.
   */
  private async consumeOne(
    limiter: RateLimiterAbstract,
    memory: RateLimiterMemory,
    key: string,
  ): Promise<{ state: LimitState; countedBy: RateLimiterAbstract }> {
    const toState = (res: RateLimiterRes) => ({
      limit: limiter.points,
      remaining: Math.max(0, res.remainingPoints),
      reset: Math.ceil((Date.now() + res.msBeforeNext) / 1000),
    });
    let countedBy: RateLimiterAbstract = limiter;
    try {
      if (limiter === memory) return { state: toState(await memory.consume(key)), countedBy };
      const counting = limiter.consume(key);
      counting.catch(() => undefined);
      const res = await withinDeadline(counting, RATE_LIMIT_REDIS_MS, REDIS_LATE).catch((err: unknown) => {
        if (err instanceof RateLimiterRes) throw err;
        countedBy = memory;
        return memory.consume(key);
      });
      return { state: toState(res), countedBy };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const state = { ...toState(rejection), retryAfter: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
      return { state, countedBy };
    }
  }

  private limiter(pluginId: string, bucket: string, points: number, duration: number) {
    const id = `${pluginId}:${bucket}:${points}:${duration}`;
    let pair = this.limiters.get(id);
    if (!pair) {
      const keyPrefix = `${this.config.redisPrefix}:rl:${pluginId}:${bucket}`;
      const memory = new RateLimiterMemory({ keyPrefix, points, duration });
      const limiter = this.redis
        ? new RateLimiterRedis({
            storeClient: this.redis,
            useRedisPackage: true,
            rejectIfRedisNotReady: true,
            keyPrefix,
            points,
            duration,
          })
        : memory;
      this.limiters.set(id, (pair = { limiter, memory }));
    }
    return pair;
  }
}
