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
  let parsed: unknown;
  let raw: string;
  try {
    // A `__proto__` member is dropped like any member the schema does not name (co-body's types omit the option).
    const options = {
      limit: ctx.state.bodyLimit ?? '1mb',
      strict: true,
      onProtoPoisoning: 'remove',
      returnRawBody: true,
    };
    ({ parsed, raw } = (await coBody().json(ctx.req, options)) as unknown as { parsed: unknown; raw: string });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') {
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        `Request body is larger than the limit of ${ctx.state.bodyLimit ?? '1mb'}`,
      );
    }
    // co-body throws JSON.parse's own SyntaxError, which quotes the body: the answer names no part of it.
    if (type === 'entity.parse.failed' || err instanceof SyntaxError) {
      const notObject = /only supports object and array/.test((err as Error).message);
      throw new AppError(
        'BAD_REQUEST',
        notObject ? 'The request body must be a JSON object or array' : 'Malformed JSON in request body',
      );
    }
    throw new AppError('BAD_REQUEST', `Could not read the request body: ${(err as Error).message}`);
  }
  ctx.state.jsonBody = parsed;
  // Only a `\uD800`-style escape makes one (UTF-8 cannot): the text would be stored as U+FFFD, not as sent.
  if (SURROGATE_ESCAPE.test(raw) && holdsLoneSurrogate(parsed))
    throw new AppError('BAD_REQUEST', 'The request body holds a lone UTF-16 surrogate (\\uD800-\\uDFFF): no character');
  return parsed;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether any string of a parsed JSON value (a member's name included) holds an unpaired surrogate. */
function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(holdsLoneSurrogate);
  if (value && typeof value === 'object')
    return Object.entries(value).some(([key, member]) => LONE_SURROGATE.test(key) || holdsLoneSurrogate(member));
  return false;
}
