import proxyaddr from 'proxy-addr';
import type { Middleware } from 'koa';

/** X-Forwarded-For is believed only when the peer is one of the configured trusted proxies. */
export function clientAddress(trustedProxies: string[]): Middleware {
  const trust = proxyaddr.compile(trustedProxies);
  return async (ctx, next) => {
    ctx.state.clientAddress = proxyaddr(ctx.req, trust);
    return next();
  };
}
