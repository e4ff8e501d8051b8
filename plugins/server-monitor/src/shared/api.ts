import crypto from 'node:crypto';
import { AppError, AppConfig, PluginApi, RenderedError } from '@switchboard/core';

export const MONITOR_PREFIX = '/api/servermonitor';

/** The spec's error body: `{success: false, message}`, and `error` (the detail) on a 500. */
export function renderMonitorError(err: AppError): RenderedError {
  const detail = err.extra?.error;
  return {
    status: err.status,
    body: {
      success: false,
      message: err.message,
      ...(err.status === 500 ? { error: String(detail ?? err.message) } : {}),
    },
  };
}

/** The routes of the spec: no API token; the key is the last path segment (checked by `requireKey`). */
export const monitorGroup = (api: PluginApi) =>
  api.group({ prefix: MONITOR_PREFIX, tag: 'server-monitor', auth: 'none', renderError: renderMonitorError });

const digest = (text: string) => crypto.createHash('sha256').update(text).digest();

/**
 * SERVER_MONITOR_API_KEY compared in constant time (both sides hashed to one length first); unset, every
 * key is wrong.
 */
export function keyHolds(config: AppConfig, given: string | undefined): boolean {
  const expected = config.env.SERVER_MONITOR_API_KEY;
  if (!expected || given === undefined) return false;
  return crypto.timingSafeEqual(digest(expected), digest(given));
}

export function requireKey(config: AppConfig, given: string | undefined): void {
  if (!keyHolds(config, given)) throw new AppError('AUTH_INSUFFICIENT_PERMISSIONS', 'Invalid API key');
}

export const keyParam = { type: 'string', maxLength: 512, description: 'SERVER_MONITOR_API_KEY' } as const;

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

/** Params of a route whose only segment before the key is an id. */
export const idAndKey = {
  type: 'object',
  required: ['id', 'key'],
  properties: { id: { type: 'string', maxLength: 32 }, key: keyParam },
} as const;
