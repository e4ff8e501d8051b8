import type { Context } from 'koa';
import { AppError } from './errors';
import { loadOnFirstUse } from '../load-on-first-use';

const coBody = loadOnFirstUse(() => require('co-body') as typeof import('co-body'));

/**
 * The JSON request body, or undefined when the request has none. Malformed JSON is a 400,
 * a body over the configured limit a 413, and a body that is not JSON a 415.
 */
export async function readJsonBody(ctx: Context): Promise<unknown> {
  if ('jsonBody' in ctx.state) return ctx.state.jsonBody;
  // `Content-Length: 0` is no body, whatever its type: fetch, browsers and curl -d '' send it for a bodiless POST.
  if (ctx.request.length === 0) return undefined;
  const isJson = ctx.is('application/json', '+json');
  if (isJson === null) return undefined;
  if (isJson === false) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be JSON (Content-Type: application/json)');
  }
  try {
    // A `__proto__` member is dropped like any member the schema does not name (co-body's types omit the option).
    const options = { limit: ctx.state.bodyLimit ?? '1mb', strict: true, onProtoPoisoning: 'remove' };
    ctx.state.jsonBody = await coBody().json(ctx.req, options);
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        `Request body is larger than the limit of ${ctx.state.bodyLimit ?? '1mb'}`,
      );
    }
    if (type === 'entity.parse.failed') throw new AppError('BAD_REQUEST', 'Malformed JSON in request body');
    throw new AppError('BAD_REQUEST', `Could not read the request body: ${(err as Error).message}`);
  }
  return ctx.state.jsonBody;
}
