import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { AppError, ErrorCode } from './errors';
import { isDatabaseFull, isDatabaseUnavailable, isSchemaBehind, NOT_MIGRATED } from '../db/errors';
import { errorBody } from './envelope';
import { RepeatedWarning } from '../repeated-warning';
import { isRedisAway } from '../redis-away';
import type { ApiGroup, ApiRegistry, RenderedError } from './api-registry';

const HTTP_STATUS_CODES: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  404: 'RESOURCE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

/**
 * Anything thrown becomes an AppError; an unexpected one is a 500 that hides its stack. A database that
 * cannot be reached is a 503, logged in one line (once per `unavailable` interval when given): nothing is
 * wrong with the request, and an outage would otherwise write a stack per request (so is a Redis that did
 * not answer in time: RedisAwayError). So is a database not
 * migrated to this version (logged as an error: an operator must act).
 */
export function asAppError(err: unknown, log: Logger, unavailable?: RepeatedWarning): AppError {
  if (err instanceof AppError) return err;
  const tell = (level: 'warn' | 'error', fields: Record<string, unknown>, message: string) =>
    unavailable ? unavailable[level](log, fields, message) : log[level](fields, message);
  if (isDatabaseUnavailable(err)) {
    const fields = { code: (err as { code?: string }).code };
    if (isDatabaseFull(err)) {
      // An operator must act: logged as an error.
      tell('error', fields, `database cannot write (disk full or failing): ${(err as Error).message}`);
      return new AppError(
        'SERVICE_UNAVAILABLE',
        'The database cannot write for now (no space left on its disk, or the disk failing): send the request again later',
      );
    }
    tell('warn', fields, `database unavailable: ${(err as Error).message}`);
    return new AppError('SERVICE_UNAVAILABLE', 'The database cannot be reached: send the request again shortly');
  }
  if (isRedisAway(err)) {
    tell('warn', {}, (err as Error).message);
    return new AppError('SERVICE_UNAVAILABLE', 'Redis cannot be reached: send the request again shortly');
  }
  if (isSchemaBehind(err)) {
    tell('error', {}, `database not migrated to this version (run migrate): ${(err as Error).message}`);
    return new AppError('SERVICE_UNAVAILABLE', NOT_MIGRATED);
  }
  const status = (err as { status?: number }).status;
  const expose = (err as { expose?: boolean }).expose;
  if (status && HTTP_STATUS_CODES[status] && expose !== false) {
    return new AppError(HTTP_STATUS_CODES[status], (err as Error).message);
  }
  log.error({ err }, 'unhandled error');
  return new AppError('INTERNAL_ERROR', 'Internal server error');
}

export const standardRender = (err: AppError): RenderedError => ({
  status: err.status,
  body: errorBody(err.code, err.message, err.details, err.extra),
});

/** The Retry-After of a 503, in seconds. */
const SERVICE_UNAVAILABLE_RETRY_S = 2;

/** One error mapping for the whole engine; a group with its own error shape renders it. */
export function errorHandler(logger: Logger, registry: ApiRegistry): Middleware {
  // Every request meets an outage: one line per 10 s says it, with the count of requests it failed.
  const unavailable = new RepeatedWarning(10_000);
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body === undefined) throwUnanswered(ctx);
    } catch (err) {
      const appError = asAppError(err, ctx.state.log ?? logger, unavailable);
      // The guard names the group; an error raised before it (shutting down) finds it by path.
      const group = (ctx.state.group as ApiGroup | undefined) ?? registry.groupFor(ctx.path);
      const rendered = (group?.options.renderError ?? standardRender)(appError);
      ctx.status = rendered.status;
      ctx.body = rendered.body;
      if (appError.code === 'RATE_LIMIT_EXCEEDED') ctx.set('Retry-After', String(appError.extra?.retry_after));
      // A 401 for an API token names the scheme it wants (RFC 9110 15.5.2). A provider's signature refused
      // (SIGNATURE_INVALID, Postmark's Basic among them) is no Bearer challenge.
      if (appError.code === 'AUTH_INVALID_TOKEN') ctx.set('WWW-Authenticate', 'Bearer');
      // Shutting down (another process answers) or the database out of reach (back in seconds, or later):
      // a short hint, so clients retry soon without hammering.
      if (appError.code === 'SERVICE_UNAVAILABLE') ctx.set('Retry-After', String(SERVICE_UNAVAILABLE_RETRY_S));
    }
  };
}

/**
 * A request no route answered: the routers' allowedMethods() left 404, 405 (known path, other method,
 * `Allow` set) or 501 (a method no router implements, `Allow` naming the path's methods if it has any).
 */
function throwUnanswered(ctx: Context): void {
  const allow = ctx.response.get('Allow');
  if (ctx.status === 405 || (ctx.status === 501 && allow)) {
    throw new AppError('METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`);
  }
  if (ctx.status === 501) {
    ctx.remove('Allow');
    throw new AppError('NOT_IMPLEMENTED', `The method ${ctx.method} is not implemented`);
  }
  if (ctx.status === 404) throw new AppError('RESOURCE_NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`);
}
