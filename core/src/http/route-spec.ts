import type { RateLimitPolicy } from '../config/types';
import type { AppError } from './errors';

/** What another status of a route is: a sentence, or a sentence with the body's content type. */
export type OtherAnswer = string | { description: string; contentType?: string; schema?: object };

/** A route as a plugin declares it: what it takes, answers and needs (api-registry.ts registers it). */
export interface RouteSpec {
  summary: string;
  description?: string;
  /** `resource:action`; every route of a token-authenticated group must name one. */
  permission?: string;
  params?: object;
  query?: object;
  body?: object;
  /** Top-level body fields whose surrounding white space is dropped before validation. */
  trim?: string[];
  response: { status?: number; description?: string; schema?: object; contentType?: string };
  /**
   * The other statuses this route answers beyond those its kind of route always may (documented-responses.ts),
   * each with when: `{409: 'DUPLICATE_ENTRY: a list with this name exists'}`.
   */
  answers?: Readonly<Record<number, OtherAnswer>>;
  /** Left out of the OpenAPI document: a catch-all that only answers errors. */
  unpublished?: boolean;
  /** A body the route reads itself (not JSON checked by `body`): the content types the document names for it. */
  rawBody?: Readonly<Record<string, object>>;
  /** A GET route published as HEAD too (koa-router answers HEAD for every GET; a few are meant for it). */
  head?: boolean;
}

export interface RenderedError {
  status: number;
  body: unknown;
}

export interface ApiGroupOptions {
  /** Path prefix, e.g. `/api/v1`; every route path is relative to it. */
  prefix: string;
  /** OpenAPI tag. */
  tag: string;
  /** `token`: bearer API token required; `none`: the routes check access themselves. */
  auth: 'token' | 'none';
  /** null: not rate limited (e.g. provider webhooks). Defaults to the plugin's policy. */
  rateLimit?: RateLimitPolicy | null;
  /**
   * `all` (default): every request counts, and one over the limit is refused before it runs. `refusals`: only
   * requests the routes refuse (an answer of 400 or more) count, and once over the limit they are answered 429;
   * an accepted request is never refused for rate. For signed links mailbox providers follow from few
   * addresses (one-click unsubscribe, confirmation, tracking): a valid token is its own proof.
   * `access-refusals`: as `refusals`, but only answers refusing the request's credentials (401, 403) count, so
   * a caller with the right key is never limited, whatever its route answers (the server-monitor key).
   */
  rateLimitCounts?: 'all' | 'refusals' | 'access-refusals';
  /** A spec whose error body differs from the standard envelope renders its own. */
  renderError?: (err: AppError) => RenderedError;
  /** The JSON schema of what `renderError` renders, for the OpenAPI document. */
  errorSchema?: object;
}
