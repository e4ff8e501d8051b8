import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { Metrics } from './metrics';

export type ReadinessCheck = () => Promise<Record<string, 'ok' | string>>;

/** Liveness, readiness (every dependency answers, else 503) and Prometheus metrics (behind `metricsAccess`). */
export function healthRouter(
  ready: ReadinessCheck,
  metrics: Metrics,
  version: string,
  metricsAccess: Middleware,
): Router {
  const router = new Router();
  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok', version };
  });
  router.get('/ready', async (ctx) => {
    const checks = await ready();
    const ok = Object.values(checks).every((v) => v === 'ok');
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ready' : 'not ready', checks };
  });
  router.get('/metrics', metricsAccess, async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  return router;
}
