import type { Middleware } from 'koa';
import type { ApiRegistry } from './api-registry';

const isParam = (segment: string) => segment.startsWith(':') || segment.startsWith('*');

/** Whether a route path with parameters (`/subscribers/:id`) would also take the literal path. */
function takes(pattern: string[], literal: string[]): boolean {
  return pattern.length === literal.length && pattern.every((s, i) => isParam(s) || s === literal[i]);
}

/**
 * A literal path that a parameter route would also match (`/subscribers/batch` beside `/subscribers/:id`)
 * answers only its own methods: GET /subscribers/batch is a 405 naming them, not a subscriber called
 * "batch", and OPTIONS names exactly them.
 */
export function shadowedPaths(registry: ApiRegistry): Middleware {
  const routes = registry.routes().map((r) => ({
    method: r.method,
    segments: (r.group.options.prefix + r.path).split('/'),
  }));
  const methodsOf = new Map<string, Set<string>>();
  for (const literal of routes.filter((r) => !r.segments.some(isParam))) {
    const shadows = routes.some((r) => r.segments.some(isParam) && takes(r.segments, literal.segments));
    if (!shadows) continue;
    const path = literal.segments.join('/');
    (methodsOf.get(path) ?? methodsOf.set(path, new Set()).get(path)!).add(literal.method);
  }
  return async (ctx, next) => {
    const methods = methodsOf.get(ctx.path.replace(/(.)\/$/, '$1'));
    if (!methods || methods.has(ctx.method) || (ctx.method === 'HEAD' && methods.has('GET'))) return next();
    ctx.set('Allow', [...methods, ...(methods.has('GET') ? ['HEAD'] : [])].join(', '));
    // As the routers' allowedMethods() leave it: OPTIONS answered, another method a 405 the error handler words.
    if (ctx.method === 'OPTIONS') ctx.body = '';
    else ctx.status = 405;
  };
}
