import getRawBody from 'raw-body';
import type { Context } from 'koa';
import { AppError } from './errors';

/**
 * The request body's bytes as sent (what a provider signed), up to the configured limit: a larger body
 * is a 413.
 */
export async function readRawBody(ctx: Context): Promise<Buffer> {
  const limit = (ctx.state.bodyLimit as string | undefined) ?? '1mb';
  try {
    return await getRawBody(ctx.req, { limit, length: ctx.get('content-length') || undefined });
  } catch (err) {
    if ((err as { type?: string }).type === 'entity.too.large')
      throw new AppError('PAYLOAD_TOO_LARGE', `Request body is larger than the limit of ${limit}`);
    throw new AppError('BAD_REQUEST', `Could not read the request body: ${(err as Error).message}`);
  }
}
