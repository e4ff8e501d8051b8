import type Router from '@koa/router';
import type { Middleware } from 'koa';
import compose from 'koa-compose';
import type { ApiRegistry } from './api-registry';

/** Text a route path matches as it is: no parameter, wildcard, optional group or escape. */
const isLiteral = (segment: string) => !/[:*{}()[\]?+!\\]/.test(segment);
/** After a wildcard or an optional group, a route's segments no longer line up with a path's. */
const isOpenEnded = (segment: string) => /[*{}]/.test(segment);

/**
 * Whether no route of the router can match a path under `prefix` with a segment after it (`prefix/x...`):
 * each route path names another literal segment where the prefix has one, or ends before the prefix
 * does (a parameter takes one segment, and routes match whole paths, case-insensitively).
 */
export function cannotMatchUnder(router: Router, prefix: string): boolean {
  const wanted = prefix.toLowerCase().split('/');
  return router.stack.every((layer) => {
    if (layer.methods.length === 0 || typeof layer.path !== 'string') return false;
    const segments = layer.path.toLowerCase().split('/');
    for (const [i, segment] of segments.entries()) {
      if (isOpenEnded(segment) || i >= wanted.length) return false;
      if (isLiteral(segment) && segment !== wanted[i]) return true;
    }
    return true;
  });
}

/**
 * The routers in their order, each followed by its allowedMethods(), as one middleware. A request with a
 * segment under a group's prefix passes only the routers that could match it (a webhook no longer tests
 * every route of the token API): the routers left out match nothing there, and allowedMethods() answers
 * from the routes matched (all routers take the same methods), so every request is answered as before.
 */
export function routerChain(routers: Router[], registry: ApiRegistry): Middleware {
  const chain = (list: Router[]): Middleware =>
    compose(list.flatMap((r) => [r.routes(), r.allowedMethods()] as Middleware[]));
  const everyRouter = chain(routers);
  const underPrefix = new Map<string, Middleware>();
  for (const { options } of registry.groups) {
    if (underPrefix.has(options.prefix) || options.prefix.endsWith('/')) continue;
    const candidates = routers.filter((r) => !cannotMatchUnder(r, options.prefix));
    // None could match: one still runs, so that its allowedMethods() answers an unknown method 501 as the chain does.
    underPrefix.set(options.prefix, chain(candidates.length ? candidates : routers.slice(0, 1)));
  }
  return (ctx, next) => {
    const prefix = registry.groupFor(ctx.path)?.options.prefix;
    const after = prefix === undefined ? '' : ctx.path.slice(prefix.length, prefix.length + 2);
    const chosen = after.length === 2 && after[1] !== '/' ? underPrefix.get(prefix!) : undefined;
    return (chosen ?? everyRouter)(ctx, next);
  };
}
