import type { ApiRegistry, RouteRecord } from './api-registry';
import { documentedResponses } from './documented-responses';
import { CHECKED_ALONE } from './validation';

/** `/lists/:id/subscribers` -> `/lists/{id}/subscribers`; a route at its group's prefix has no trailing slash. */
const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/(.)\/$/, '$1');

/** `GET /api/campaign/lists/{id}/subscribers` -> `getCampaignListsByIdSubscribers`. */
function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((part) => part && part !== 'api')
    .map((part) => (part.startsWith('{') ? `by-${part.slice(1, -1)}` : part))
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w[0].toUpperCase() + w.slice(1))].join('');
}

/**
 * The request schema as the server reads it: unknown members are dropped, not refused (ajv's
 * removeAdditional), so the document does not claim `additionalProperties: false` for requests.
 */
function asRead(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(asRead);
  if (typeof schema !== 'object' || schema === null) return schema;
  const alone = (schema as { [CHECKED_ALONE]?: { description?: string } })[CHECKED_ALONE];
  if (alone)
    return asRead({
      ...alone,
      description: [alone.description, 'checked on its own: one that does not fit fails alone (in `errors`)']
        .filter(Boolean)
        .join('; '),
    });
  return Object.fromEntries(
    Object.entries(atLeastOneKnown(schema))
      .filter(([key, value]) => !(key === 'additionalProperties' && value === false))
      .map(([key, value]) => [key, asRead(value)]),
  );
}

/**
 * `minProperties: 1` as the server reads it: unknown members are dropped first, so one known member is
 * needed (`{"unknown": 1}` is a 422). Published as "any one of the properties is required", which says so;
 * each branch carries its member's schema, or client generators read a branch as any value and the
 * whole body as `unknown` (openapi-typescript did, for every change body: session 35).
 */
function atLeastOneKnown(schema: object): object {
  const { minProperties, properties, anyOf, ...rest } = schema as {
    minProperties?: unknown;
    properties?: Record<string, unknown>;
    anyOf?: unknown;
  };
  if (minProperties !== 1 || !properties || anyOf !== undefined) return schema;
  const oneRequired = (name: string) => ({ required: [name], properties: { [name]: properties[name] } });
  return { ...rest, properties, anyOf: Object.keys(properties).map(oneRequired) };
}

/** A body left out is read as `{}`: it may be when its schema is an object that `{}` satisfies. */
function mayBeLeftOut(schema: object): boolean {
  const s = schema as { type?: unknown; required?: string[]; minProperties?: number; anyOf?: unknown; oneOf?: unknown };
  return s.type === 'object' && !s.required?.length && !s.minProperties && !s.anyOf && !s.oneOf;
}

function parameters(route: RouteRecord): object[] {
  const out: object[] = [];
  for (const [where, schema] of [
    ['path', route.spec.params],
    ['query', route.spec.query],
  ] as const) {
    const s = schema as { properties?: Record<string, object>; required?: string[] } | undefined;
    for (const [name, property] of Object.entries(s?.properties ?? {})) {
      out.push({
        name,
        in: where,
        required: where === 'path' || (s?.required ?? []).includes(name),
        schema: asRead(property),
      });
    }
  }
  return out;
}

const integerHeader = (description: string) => ({ description, schema: { type: 'integer' } });
const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': integerHeader('requests allowed in the window'),
  'X-RateLimit-Remaining': integerHeader('requests left in the window'),
  'X-RateLimit-Reset': integerHeader('when the window starts again (Unix time, seconds)'),
};

/**
 * The headers a response carries (the group guard sets them): a rate-limited group's X-RateLimit-* on
 * every response it counts (all, its refusals, or its credentials' refusals and the 429 they lead to),
 * Retry-After on a 429, and a redirect's Location. Node's own 431 carries none.
 */
function headersOf(route: RouteRecord, status: number): Record<string, object> {
  const { rateLimit, rateLimitCounts = 'all' } = route.group.options;
  const counted =
    rateLimitCounts === 'all'
      ? status !== 431
      : rateLimitCounts === 'refusals'
        ? status >= 400 && status < 500 && status !== 431
        : [401, 403, 429].includes(status);
  return {
    ...(rateLimit && counted ? RATE_LIMIT_HEADERS : {}),
    ...(status === 429 || status === 503
      ? { 'Retry-After': integerHeader('seconds to wait before trying again') }
      : {}),
    ...(status >= 300 && status < 400
      ? { Location: { description: 'where it leads', schema: { type: 'string' } } }
      : {}),
  };
}

function responses(route: RouteRecord): Record<string, { content?: object }> {
  return Object.fromEntries(
    Object.entries(documentedResponses(route)).map(([status, { description, contentType, schema }]) => {
      const headers = headersOf(route, Number(status));
      return [
        status,
        {
          description,
          ...(Object.keys(headers).length ? { headers } : {}),
          ...(schema || contentType
            ? { content: { [contentType ?? 'application/json']: schema ? { schema } : {} } }
            : {}),
        },
      ];
    }),
  );
}

function operation(route: RouteRecord, path: string, method = route.method): object {
  const { spec, group } = route;
  const answers = responses(route);
  return {
    operationId: operationIdOf(method, path),
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [group.options.tag],
    ...(spec.permission ? { 'x-permission': spec.permission } : {}),
    ...(group.options.auth === 'token' ? { security: [{ bearerAuth: [] }] } : { security: [] }),
    parameters: parameters(route),
    ...(spec.body
      ? {
          requestBody: {
            required: !mayBeLeftOut(spec.body),
            content: { 'application/json': { schema: asRead(spec.body) } },
          },
        }
      : spec.rawBody
        ? { requestBody: { required: true, content: spec.rawBody } }
        : {}),
    // A HEAD answer has the GET's statuses and headers, no body.
    responses:
      method === 'HEAD'
        ? Object.fromEntries(Object.entries(answers).map(([status, { content: _body, ...rest }]) => [status, rest]))
        : answers,
  };
}

/** The OpenAPI 3.1 document, built from the very schemas that validate requests. */
export function buildOpenApi(registry: ApiRegistry, info: { version: string; serverUrl: string }): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of registry.routes()) {
    if (route.spec.unpublished) continue;
    const path = toOpenApiPath(route.group.options.prefix + route.path);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, path);
    if (route.method === 'GET' && route.spec.head) paths[path].head = operation(route, path, 'HEAD');
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchboard API',
      version: info.version,
      description:
        'Email campaigns, server monitoring and a users/projects API. Unknown members of request bodies and ' +
        'queries are ignored. Besides the statuses each operation lists, any route may answer 500 ' +
        '(INTERNAL_ERROR: a bug, logged with the request id), 503 (SERVICE_UNAVAILABLE: the process is ' +
        'shutting down or the database cannot be reached; send again) and 405 with Allow (a method the path does not take).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: info.serverUrl }],
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
