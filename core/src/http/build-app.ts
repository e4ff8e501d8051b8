import Koa from 'koa';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/types';
import type { ApiTokenService } from '../auth/api-tokens';
import type { ApiRegistry } from './api-registry';
import type { Metrics } from './metrics';
import type { RateLimits } from './rate-limits';
import { requestContext } from './request-context';
import { errorHandler } from './error-handler';
import { clientAddress } from './client-address';
import { groupGuard } from './group-guard';
import { shadowedPaths } from './shadowed-paths';
import { routerChain } from './router-chain';
import { docsRouter } from './docs';
import { healthRouter, ReadinessCheck } from './health';
import { buildOpenApi } from './openapi';
import { htmlPageHeaders, noSniff } from './security-headers';
import { metricsAccess } from './metrics-access';
import type { ShutdownGate } from './shutdown-gate';

export interface HttpDeps {
  config: AppConfig;
  logger: Logger;
  registry: ApiRegistry;
  tokens: ApiTokenService;
  rateLimits: RateLimits;
  metrics: Metrics;
  ready: ReadinessCheck;
  shutdown: ShutdownGate;
}

/** The Koa application: built apart from listen() so tests drive it in-process. */
export function buildHttpApp(deps: HttpDeps): Koa {
  for (const group of deps.registry.groups) group.compileAll();
  const app = new Koa();
  app.silent = true;
  const bodyLimit = deps.config.bodyLimit;
  app.use(noSniff());
  app.use(htmlPageHeaders({ connectSources: [new URL(deps.config.publicUrl).origin] }));
  app.use(requestContext(deps.logger, deps.metrics));
  app.use(errorHandler(deps.logger, deps.registry));
  app.use(deps.shutdown.middleware());
  app.use(async (ctx, next) => {
    ctx.state.bodyLimit = bodyLimit;
    return next();
  });
  app.use(clientAddress(deps.config.trustedProxies));
  app.use(groupGuard(deps.registry, deps.tokens, deps.rateLimits));
  app.use(shadowedPaths(deps.registry));
  // 405 and 501 are left as statuses (with Allow) for the error handler to answer in the group's envelope.
  app.use(
    routerChain(
      [
        healthRouter(deps.ready, deps.metrics, deps.config.version, metricsAccess(deps.config)),
        docsRouter(() =>
          buildOpenApi(deps.registry, { version: deps.config.version, serverUrl: deps.config.publicUrl }),
        ),
        ...deps.registry.groups.map((g) => g.router),
      ],
      deps.registry,
    ),
  );
  return app;
}
