import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { AppError, ErrorCode } from './errors';
import { errorBody } from './envelope';
import type { ApiGroup, RenderedError } from './api-registry';

const HTTP_STATUS_CODES: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  404: 'RESOURCE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  501: 'METHOD_NOT_ALLOWED',
};

/** Anything thrown becomes an AppError; an unexpected one is a 500 that hides its stack. */
export function asAppError(err: unknown, log: Logger): AppError {
  if (err instanceof AppError) return err;
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

/** One error mapping for the whole engine; a group with its own error shape renders it. */
export function errorHandler(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError('RESOURCE_NOT_FOUND', `No route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const appError = asAppError(err, ctx.state.log ?? logger);
      const group = ctx.state.group as ApiGroup | undefined;
      const rendered = (group?.options.renderError ?? standardRender)(appError);
      ctx.status = rendered.status;
      ctx.body = rendered.body;
      if (appError.code === 'RATE_LIMIT_EXCEEDED') ctx.set('Retry-After', String(appError.extra?.retry_after));
      if (appError.status === 405 && (err as { headers?: Record<string, string> }).headers?.Allow) {
        ctx.set('Allow', (err as { headers: Record<string, string> }).headers.Allow);
      }
    }
  };
}
