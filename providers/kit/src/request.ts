import { malformed } from './errors';
import type { InboundRequest } from './types';

/** A header's value (the first when repeated); names are matched in lower case. */
export function header(request: InboundRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

/** The media type of the body, lower case, without parameters. */
export const mediaType = (request: InboundRequest): string =>
  (header(request, 'content-type') ?? '').split(';')[0].trim().toLowerCase();

export function jsonBody(request: InboundRequest): unknown {
  try {
    return JSON.parse(request.rawBody.toString('utf8'));
  } catch {
    throw malformed('The body is not JSON');
  }
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Our id as a provider hands it back (a number or its digits), or null. */
export function ourId(value: unknown): number | null {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^[1-9]\d{0,15}$/.test(text)) return null;
  const id = Number(text);
  return Number.isSafeInteger(id) ? id : null;
}

/** A string field, or null. */
export const text = (value: unknown): string | null => (typeof value === 'string' && value ? value : null);

/** A time given as UNIX seconds (number or digits) or ISO text; `fallback` when it is neither. */
export function timeOf(value: unknown, fallback: Date): Date {
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value))) {
    const date = new Date(Number(value) * 1000);
    return Number.isNaN(date.getTime()) ? fallback : date;
  }
  if (typeof value === 'string') {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? fallback : date;
  }
  return fallback;
}
