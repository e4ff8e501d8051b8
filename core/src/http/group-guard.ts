import type { Middleware } from 'koa';
import type { ApiRegistry } from './api-registry';
import type { ApiTokenService } from '../auth/api-tokens';
import type { RateLimits } from './rate-limits';
import { AppError } from './errors';
import { isDatabaseNotServing } from '../db/errors';
import { isRedisAway } from '../redis-away';

const bearer = (header: string): string | undefined => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
};

/**
 * For every request under a group's prefix (matched route or not): identify the token without
 * refusing yet, count the request, and set the X-RateLimit-* headers before anything can fail. A group
 * counting refusals only counts a request once its route refused it, one counting access refusals only once its
 * route refused its credentials (see ApiGroupOptions.rateLimitCounts). A request the engine failed (5xx) is
 * not counted: a client retrying through a database outage keeps its allowance.
 */
export function groupGuard(registry: ApiRegistry, tokens: ApiTokenService, rateLimits: RateLimits): Middleware {
  return async (ctx, next) => {
    const group = registry.groupFor(ctx.path);
    if (!group) return next();
    ctx.state.group = group;
    const address = ctx.state.clientAddress as string;
    const policy = group.options.rateLimit;
    const counts = group.options.rateLimitCounts ?? 'all';
    // A token the database could not read (it is away, or not migrated): the request is answered 503 with the
    // headers of its address's bucket, its point given back (it had none: session 34).
    let unread: unknown;
    if (group.options.auth === 'token') {
      try {
        const result = await tokens.verify(bearer(ctx.get('Authorization')), address);
        if (result.ok) ctx.state.auth = result.auth;
        else ctx.state.authRejection = result.reason;
      } catch (err) {
        if (!policy || counts !== 'all' || !isDatabaseNotServing(err)) throw err;
        unread = err;
      }
    }
    if (!policy) return next();
    const count = async () => {
      const state = await rateLimits.consume(
        group.options.pluginId,
        policy,
        ctx.method,
        ctx.state.auth ?? null,
        address,
      );
      ctx.set('X-RateLimit-Limit', String(state.limit));
      ctx.set('X-RateLimit-Remaining', String(state.remaining));
      ctx.set('X-RateLimit-Reset', String(state.reset));
      // The database's 503 before any 429: the client is told to come back either way, and is charged nothing.
      if (unread) {
        await state.giveBack().catch(() => undefined);
        throw unread;
      }
      if (state.retryAfter !== undefined) {
        throw new AppError('RATE_LIMIT_EXCEEDED', `Rate limit exceeded, retry in ${state.retryAfter} s`, undefined, {
          retry_after: state.retryAfter,
        });
      }
      return state;
    };
    if (counts === 'all') {
      const counted = await count();
      try {
        return await next();
      } catch (err) {
        if (isEngineFailure(statusOf(err))) await counted.giveBack().catch(() => undefined);
        throw err;
      }
    }
    const counted = counts === 'refusals' ? isRefusal : isAccessRefusal;
    try {
      await next();
    } catch (err) {
      if (counted(statusOf(err))) await count();
      throw err;
    }
    if (counted(ctx.status)) await count();
  };
}

/** The engine, not the client, failed the request (its database out of reach): never the client's to pay for. */
const isEngineFailure = (status: number) => status >= 500;
const isRefusal = (status: number) => status >= 400 && !isEngineFailure(status);
/** The request's credentials refused (a token, a key): what guessing them meets. */
const isAccessRefusal = (status: number) => status === 401 || status === 403;

/** The status a thrown error is answered with (the error handler's: anything unknown is a 500). */
function statusOf(err: unknown): number {
  if (err instanceof AppError) return err.status;
  if (isDatabaseNotServing(err) || isRedisAway(err)) return 503;
  const status = (err as { status?: unknown }).status;
  return typeof status === 'number' && status >= 400 ? status : 500;
}
