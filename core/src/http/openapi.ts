import type { ApiRegistry, RouteRecord } from './api-registry';

const errorSchema = {
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
};

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function parameters(route: RouteRecord): object[] {
  const out: object[] = [];
  for (const [where, schema] of [
    ['path', route.spec.params],
    ['query', route.spec.query],
  ] as const) {
    const s = schema as { properties?: Record<string, object>; required?: string[] } | undefined;
    for (const [name, property] of Object.entries(s?.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (s?.required ?? []).includes(name), schema: property });
    }
  }
  return out;
}

function operation(route: RouteRecord): object {
  const { spec, group } = route;
  const status = String(spec.response.status ?? 200);
  const errors: Record<string, object> = {};
  const errorResponse = (description: string) => ({
    description,
    content: { 'application/json': { schema: errorSchema } },
  });
  if (group.options.auth === 'token') {
    errors['401'] = errorResponse('AUTH_INVALID_TOKEN');
    errors['403'] = errorResponse('AUTH_INSUFFICIENT_PERMISSIONS');
  }
  if (spec.params) errors['404'] = errorResponse('RESOURCE_NOT_FOUND');
  if (spec.body || spec.query || spec.params) errors['422'] = errorResponse('VALIDATION_ERROR');
  if (group.options.rateLimit) errors['429'] = errorResponse('RATE_LIMIT_EXCEEDED');
  return {
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [group.options.tag],
    ...(spec.permission ? { 'x-permission': spec.permission } : {}),
    ...(group.options.auth === 'token' ? { security: [{ bearerAuth: [] }] } : { security: [] }),
    parameters: parameters(route),
    ...(spec.body ? { requestBody: { required: true, content: { 'application/json': { schema: spec.body } } } } : {}),
    responses: {
      [status]: {
        description: spec.response.description ?? 'Success',
        ...(spec.response.schema ? { content: { 'application/json': { schema: spec.response.schema } } } : {}),
      },
      ...errors,
    },
  };
}

/** The OpenAPI 3.1 document, built from the very schemas that validate requests. */
export function buildOpenApi(registry: ApiRegistry, info: { version: string; serverUrl: string }): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of registry.routes()) {
    const path = toOpenApiPath(route.group.options.prefix + route.path);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Switchboard API', version: info.version },
    servers: [{ url: info.serverUrl }],
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
