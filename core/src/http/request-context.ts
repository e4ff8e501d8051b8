import crypto from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { Metrics } from './metrics';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Request id (kept from X-Request-Id when sane), a child logger carrying it, and metrics. */
export function requestContext(logger: Logger, metrics: Metrics): Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const incoming = ctx.get('X-Request-Id');
    const requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    ctx.state.requestId = requestId;
    // The child logger is made on first use: most requests never log.
    let log: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', { get: () => (log ??= logger.child({ reqId: requestId })) });
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const matched = (ctx as unknown as { _matchedRoute?: string })._matchedRoute;
      metrics.observe(ctx.method, matched ?? 'unmatched', ctx.status, seconds);
      // The route's pattern, never the URL: paths and queries carry secrets (signed-link tokens, the
      // server-monitor key, heartbeat tokens). An unmatched request logs its path without the query.
      if (logger.isLevelEnabled('debug'))
        ctx.state.log.debug(
          { method: ctx.method, route: matched ?? ctx.path, status: ctx.status, ms: Math.round(seconds * 1000) },
          'request',
        );
    }
  };
}
