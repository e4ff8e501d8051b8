import type { ApiGroupOptions, RouteSpec } from './route-spec';

/** What documentedResponses reads of a route: api-registry's RouteRecord is one. */
export interface DocumentedRoute {
  spec: RouteSpec;
  group: { options: ApiGroupOptions };
}

/** The engine's error body (`{success: false, error: {code, message, details?, retry_after?}}`). */
export const standardErrorSchema = {
  type: 'object',
  required: ['success', 'error'],
  properties: {
    success: { const: false },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        details: { type: 'object', properties: { field: { type: 'string' }, rule: { type: 'string' } } },
        retry_after: { type: 'integer' },
      },
    },
  },
} as const;

export interface DocumentedResponse {
  description: string;
  contentType?: string;
  schema?: object;
}

/**
 * Every status a route may answer, with its body: the success status, the errors its kind of route always
 * may answer (a token route 401/403, a rate-limited one 429, one with a body 400/413/415/422 ...) and the
 * ones the route names itself (`spec.answers`). The OpenAPI document publishes exactly this, and test
 * engines refuse any other status a route answers, so the two cannot drift.
 */
export function documentedResponses(route: DocumentedRoute): Record<string, DocumentedResponse> {
  const { spec, group } = route;
  const errorSchema = group.options.errorSchema ?? standardErrorSchema;
  const error = (description: string): DocumentedResponse => ({ description, schema: errorSchema });
  const out: Record<string, DocumentedResponse> = {
    [String(spec.response.status ?? 200)]: {
      description: spec.response.description ?? 'Success',
      contentType: spec.response.contentType,
      schema: spec.response.schema,
    },
  };
  if (spec.body) {
    out['400'] = error('BAD_REQUEST: the body is not JSON text of an object or array');
    out['413'] = error('PAYLOAD_TOO_LARGE: the body is larger than the configured limit');
    out['415'] = error('UNSUPPORTED_MEDIA_TYPE: the body is not sent as application/json');
  }
  if (group.options.auth === 'token') {
    out['401'] = error(
      'AUTH_INVALID_TOKEN: no token, or one that is invalid, expired, revoked or used from another address',
    );
    out['403'] = error('AUTH_INSUFFICIENT_PERMISSIONS: the token lacks the permission this route names');
  }
  if (spec.params && group.options.auth === 'token')
    out['404'] = error('RESOURCE_NOT_FOUND: no such object in the organization');
  if (spec.body || spec.query || spec.params)
    out['422'] = error('VALIDATION_ERROR: a value breaks a rule of the schema');
  // Any request may carry headers (cookies) or an ignored query parameter past the limit, on any route.
  out['431'] = { description: 'the request line and headers are over 16 KB (answered by Node.js, no body)' };
  if (group.options.rateLimit && group.options.rateLimitCounts !== 'access-refusals')
    out['429'] = error('RATE_LIMIT_EXCEEDED: over the rate limit; retry_after says when to try again');
  // Counting access refusals, only a route that may refuse credentials can be limited.
  else if (group.options.rateLimit && ['401', '403'].some((s) => s in out || s in (spec.answers ?? {})))
    out['429'] = error(
      'RATE_LIMIT_EXCEEDED: too many requests from this address were refused their credentials (the right ones are never limited); the Retry-After header says when to try again',
    );
  // Any route: the database out of reach or not migrated to this version, or the process shutting down.
  out['503'] = error(
    'SERVICE_UNAVAILABLE: the database or Redis cannot be reached, the database is not migrated to this version, or the process is stopping; Retry-After says when to try again',
  );
  for (const [status, answer] of Object.entries(spec.answers ?? {})) {
    const given = typeof answer === 'string' ? { description: answer } : answer;
    const isError = Number(status) >= 400;
    out[status] = {
      ...given,
      schema: given.schema ?? (isError ? errorSchema : spec.response.schema),
      contentType: given.contentType ?? (isError ? undefined : spec.response.contentType),
    };
  }
  return out;
}
