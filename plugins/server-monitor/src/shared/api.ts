import { AppError, isDatabaseNotServing, isRedisAway, PluginApi, RenderedError } from '@switchboard/core';

export const MONITOR_PREFIX = '/api/servermonitor';

/** The spec's error body: `{success: false, message}`, and `error` (the detail) on a 500. */
export function renderMonitorError(err: AppError): RenderedError {
  const detail = err.extra?.error;
  // Only refused keys count against the limit (monitorGroup), so its 429 says so.
  const message =
    err.code === 'RATE_LIMIT_EXCEEDED'
      ? `Too many invalid API keys from this address: retry in ${String(err.extra?.retry_after)} s`
      : err.message;
  return {
    status: err.status,
    body: {
      success: false,
      message,
      ...(err.status === 500 ? { error: String(detail ?? err.message) } : {}),
    },
  };
}

/** What `renderMonitorError` renders. */
export const monitorErrorSchema = {
  type: 'object',
  required: ['success', 'message'],
  properties: {
    success: { const: false },
    message: { type: 'string' },
    error: { type: 'string', description: 'the detail of a 500' },
  },
} as const;

/**
 * An unexpected failure of an operation: the spec's 500, its detail in `error`. A database out of reach
 * or not migrated yet, or a Redis that did not answer in time, is the engine's 503 (core's error handler
 * says which), as on every other route.
 */
export async function failingAs<T>(message: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError || isDatabaseNotServing(err) || isRedisAway(err)) throw err;
    throw new AppError('INTERNAL_ERROR', message, undefined, { error: (err as Error).message ?? String(err) });
  }
}

/**
 * The routes of the spec: no API token; the key is the last path segment (checked by `MonitorKey`). Only
 * answers refusing the key count against the plugin's per-address limit: a caller with the right key (the
 * scheduled calls, whatever they answer) and the heartbeat pings are never limited.
 */
export const monitorGroup = (api: PluginApi) =>
  api.group({
    prefix: MONITOR_PREFIX,
    tag: 'server-monitor',
    auth: 'none',
    rateLimitCounts: 'access-refusals',
    renderError: renderMonitorError,
    errorSchema: monitorErrorSchema,
  });

/** Any text: a key that is not the configured one, however long, is the spec's 403 Invalid API key. */
export const keyParam = { type: 'string', description: 'SERVER_MONITOR_API_KEY' } as const;

/** What every keyed route may answer besides its success: the spec's 403 and 500. */
export const KEYED_ANSWERS = {
  403: 'Invalid API key: the key is wrong or missing',
  500: 'the operation failed: message names it, error gives the detail',
} as const;

/** The spec's success bodies. */
export const successSchema = (properties: Record<string, object> = {}, required: string[] = []) =>
  ({
    type: 'object',
    required: ['success', 'message', ...required],
    properties: { success: { type: 'boolean' }, message: { type: 'string' }, ...properties },
  }) as const;

/** A path segment that must be a positive integer id (400 otherwise, in the spec's error shape). */
export function positiveId(text: string, what: string): number {
  const id = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(id) || id < 1)
    throw new AppError('BAD_REQUEST', `The ${what} id must be a positive integer`);
  return id;
}

/**
 * A server id as the single-server recalculation reads it: an integer that is no server's id (0, -1, one
 * past the column's range) is a server that does not exist, 404 as the spec states; other text is a 400.
 */
export function serverId(text: string): number {
  if (!/^-?\d+$/.test(text)) throw new AppError('BAD_REQUEST', 'The server id must be a positive integer');
  const id = Number(text);
  if (id < 1 || id > 4_294_967_295) throw new AppError('RESOURCE_NOT_FOUND', `Server with ID ${text} not found`);
  return id;
}

/** Params of a route whose only segment before the key is an id. */
export const idAndKey = {
  type: 'object',
  required: ['id', 'key'],
  properties: {
    id: { type: 'string', description: 'a positive integer (another value: 400 after the key is checked)' },
    key: keyParam,
  },
} as const;
