import type { Middleware } from 'koa';
import type { ApiRegistry } from './api-registry';
import type { ApiTokenService } from '../auth/api-tokens';
import type { RateLimits } from './rate-limits';
import { AppError } from './errors';

const bearer = (header: string): string | undefined => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
};

/**
 * For every request under a group's prefix (matched route or not): identify the token without
 * refusing yet, count the request, and set the X-RateLimit-* headers before anything can fail. A group
 * counting refusals only counts a request once its route refused it (see ApiGroupOptions.rateLimitCounts).
 */
export function groupGuard(registry: ApiRegistry, tokens: ApiTokenService, rateLimits: RateLimits): Middleware {
  return async (ctx, next) => {
    const group = registry.groupFor(ctx.path);
    if (!group) return next();
    ctx.state.group = group;
    const address = ctx.state.clientAddress as string;
    if (group.options.auth === 'token') {
      const result = await tokens.verify(bearer(ctx.get('Authorization')), address);
      if (result.ok) ctx.state.auth = result.auth;
      else ctx.state.authRejection = result.reason;
    }
    const policy = group.options.rateLimit;
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
      if (state.retryAfter !== undefined) {
        throw new AppError('RATE_LIMIT_EXCEEDED', `Rate limit exceeded, retry in ${state.retryAfter} s`, undefined, {
          retry_after: state.retryAfter,
        });
      }
    };
    if (group.options.rateLimitCounts !== 'refusals') {
      await count();
      return next();
    }
    try {
      await next();
    } catch (err) {
      await count();
      throw err;
    }
    if (ctx.status >= 400) await count();
  };
}
