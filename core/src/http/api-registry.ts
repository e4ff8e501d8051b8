import Router from '@koa/router';
import type { Context } from 'koa';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { AuthContext } from '../auth/api-tokens';
import type { RateLimitPolicy } from '../config/types';
import { grants, permissionProblem } from '../auth/permissions';
import { AppError } from './errors';
import { compileResponseCheck, compileValidator } from './validation';
import { readJsonBody } from './body';
import { documentedResponses } from './documented-responses';
import type { ApiGroupOptions, RouteSpec } from './route-spec';
import { loadOnFirstUse } from '../load-on-first-use';

export type { ApiGroupOptions, RenderedError, RouteSpec } from './route-spec';

/** The type a request schema describes once ajv has validated (defaults applied, unknown members dropped). */
export type Validated<S> = S extends JSONSchema ? (JSONSchema extends S ? unknown : FromSchema<S>) : unknown;
/** The type a response schema describes: what a route sends. */
export type Shape<S> = Validated<S>;
type ParamsOf<S> = S extends { params: infer P } ? Validated<P> : Record<string, string>;
type QueryOf<S> = S extends { query: infer Q } ? Validated<Q> : Record<string, unknown>;
type BodyOf<S> = S extends { body: infer B } ? Validated<B> : undefined;
/** A handler typed by its spec: params, query and body are what the spec's schemas let through. */
export type SpecHandler<S extends RouteSpec> = RouteHandler<ParamsOf<S>, QueryOf<S>, BodyOf<S>>;

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Present on every route of a token-authenticated group. */
  auth: AuthContext;
  ctx: Context;
}

export type RouteHandler<P = any, Q = any, B = any> = (input: RouteInput<P, Q, B>) => Promise<unknown>;

export interface RouteRecord {
  method: string;
  path: string;
  spec: RouteSpec;
  group: ApiGroup;
}

export interface GroupSettings extends ApiGroupOptions {
  pluginId: string;
  rateLimit: RateLimitPolicy | null;
  /** Resources any enabled plugin declares: a route's permission must name one of them. */
  resources: readonly string[];
  /** Check every success body against the route's response schema (tests turn it on). */
  checkResponses: boolean;
}

export class ApiGroup {
  readonly router: Router;
  readonly routes: RouteRecord[] = [];
  private readonly compilers: (() => unknown)[] = [];

  constructor(readonly options: GroupSettings) {
    this.router = new Router({ prefix: options.prefix });
  }

  /** Compiles every route's validators now (a schema ajv refuses stops whoever builds the HTTP app). */
  compileAll(): void {
    for (const compile of this.compilers) compile();
  }

  get<const S extends RouteSpec>(path: string, spec: S, handler: SpecHandler<S>): this;
  get(path: string, spec: RouteSpec, handler: RouteHandler): this {
    return this.add('GET', path, spec, handler);
  }
  post<const S extends RouteSpec>(path: string, spec: S, handler: SpecHandler<S>): this;
  post(path: string, spec: RouteSpec, handler: RouteHandler): this {
    return this.add('POST', path, spec, handler);
  }
  put<const S extends RouteSpec>(path: string, spec: S, handler: SpecHandler<S>): this;
  put(path: string, spec: RouteSpec, handler: RouteHandler): this {
    return this.add('PUT', path, spec, handler);
  }
  patch<const S extends RouteSpec>(path: string, spec: S, handler: SpecHandler<S>): this;
  patch(path: string, spec: RouteSpec, handler: RouteHandler): this {
    return this.add('PATCH', path, spec, handler);
  }
  delete<const S extends RouteSpec>(path: string, spec: S, handler: SpecHandler<S>): this;
  delete(path: string, spec: RouteSpec, handler: RouteHandler): this {
    return this.add('DELETE', path, spec, handler);
  }

  private add(method: string, path: string, spec: RouteSpec, handler: RouteHandler): this {
    const route = `${method} ${this.options.prefix}${path} of plugin ${this.options.pluginId}`;
    if (this.options.auth === 'token' && !spec.permission) throw new Error(`${route} names no permission`);
    const problem = spec.permission ? permissionProblem(spec.permission, this.options.resources) : null;
    if (problem) throw new Error(`${route}: permission ${spec.permission}: ${problem}`);
    const record: RouteRecord = { method, path, spec, group: this };
    this.routes.push(record);
    // Compiled when the HTTP app is built (compileAll) or at the first request, not by commands that serve nothing.
    const checks = loadOnFirstUse(() => ({
      params: spec.params ? compileValidator(spec.params, 'text') : null,
      query: spec.query ? compileValidator(spec.query, 'text') : null,
      body: spec.body ? compileValidator(spec.body, 'body') : null,
      response:
        this.options.checkResponses && spec.response.schema ? compileResponseCheck(spec.response.schema, route) : null,
    }));
    this.compilers.push(checks);
    const status = spec.response.status ?? 200;
    const needsToken = this.options.auth === 'token';
    const checkStatus = this.options.checkResponses ? undocumentedStatusCheck(record, route) : null;

    const answer = async (ctx: Context) => {
      const auth = ctx.state.auth as AuthContext | undefined;
      if (needsToken) requirePermission(ctx, auth, spec.permission!);
      const validate = checks();
      const params = validate.params ? validate.params({ ...ctx.params }) : ctx.params;
      const query = validate.query ? validate.query({ ...ctx.query }) : ctx.query;
      const body = validate.body ? validate.body(trimFields((await readJsonBody(ctx)) ?? {}, spec.trim)) : undefined;
      const result = await handler({ params, query, body, auth: auth!, ctx });
      // A handler may answer another success status than the documented one (e.g. 200 for "already there").
      ctx.status = (ctx.state.responseStatus as number | undefined) ?? status;
      validate.response?.(result);
      if (status !== 204) ctx.body = result;
    };
    // A route at the group's prefix itself: @koa/router matches a prefixed '/' without the slash too.
    this.router.register(path || '/', [method], async (ctx: Context) => {
      if (!checkStatus) return answer(ctx);
      try {
        await answer(ctx);
      } catch (err) {
        if (err instanceof AppError) checkStatus(err.status);
        throw err;
      }
      checkStatus(ctx.status);
    });
    return this;
  }
}

/** Throws (a bug: the route answers what its OpenAPI document does not say) on a status it does not document. */
function undocumentedStatusCheck(record: RouteRecord, route: string): (status: number) => void {
  const documented = new Set(Object.keys(documentedResponses(record)).map(Number));
  return (status) => {
    if (!documented.has(status))
      throw new Error(`${route} answered ${status}, which its OpenAPI document does not list`);
  };
}

function trimFields(body: unknown, fields: string[] | undefined): unknown {
  if (!fields || typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const record = body as Record<string, unknown>;
  for (const f of fields) if (typeof record[f] === 'string') record[f] = (record[f] as string).trim();
  return body;
}

function requirePermission(ctx: Context, auth: AuthContext | undefined, permission: string): void {
  if (!auth) {
    const reason = (ctx.state.authRejection as string | undefined) ?? 'missing';
    throw new AppError('AUTH_INVALID_TOKEN', REJECTION_MESSAGES[reason] ?? REJECTION_MESSAGES.invalid);
  }
  if (!grants(auth.permissions, permission)) {
    throw new AppError('AUTH_INSUFFICIENT_PERMISSIONS', `This token lacks the permission ${permission}`);
  }
}

const REJECTION_MESSAGES: Record<string, string> = {
  missing: 'Missing API token: send Authorization: Bearer <token>',
  invalid: 'Invalid API token',
  expired: 'API token has expired',
  revoked: 'API token has been revoked',
  address: 'API token is not allowed from this address',
};

/** What a plugin's `routes()` is given: groups of routes billed to that plugin's rate-limit policy. */
export interface PluginApi {
  group(options: ApiGroupOptions): ApiGroup;
}

export interface ApiRegistryOptions {
  /** Each plugin's rate-limit policy (null: not limited). */
  policies: Record<string, RateLimitPolicy | null>;
  resources: readonly string[];
  checkResponses?: boolean;
}

/** Everything the plugins registered: the HTTP layer mounts it and the OpenAPI document reads it. */
export class ApiRegistry {
  readonly groups: ApiGroup[] = [];

  constructor(private readonly options: ApiRegistryOptions) {}

  /** The registry as one plugin sees it. */
  forPlugin(pluginId: string): PluginApi {
    return { group: (options) => this.group(pluginId, options) };
  }

  private group(pluginId: string, options: ApiGroupOptions): ApiGroup {
    const rateLimit = options.rateLimit === undefined ? (this.options.policies[pluginId] ?? null) : options.rateLimit;
    const group = new ApiGroup({
      ...options,
      pluginId,
      rateLimit,
      resources: this.options.resources,
      checkResponses: this.options.checkResponses ?? false,
    });
    this.groups.push(group);
    return group;
  }

  /**
   * The group whose prefix is the longest one containing the path, in any case: the router matches paths
   * without regard to case, so `/API/...` reaches the same routes and must meet the same guard (its token
   * check, its rate limits) and error shape.
   */
  groupFor(path: string): ApiGroup | undefined {
    const lower = path.toLowerCase();
    let best: ApiGroup | undefined;
    for (const g of this.groups) {
      const p = g.options.prefix.toLowerCase();
      if ((lower === p || lower.startsWith(`${p}/`)) && (!best || p.length > best.options.prefix.length)) best = g;
    }
    return best;
  }

  routes(): RouteRecord[] {
    return this.groups.flatMap((g) => g.routes);
  }
}
