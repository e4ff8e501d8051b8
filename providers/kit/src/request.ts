import { parse as parseLossless } from 'lossless-json';
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

/** An integer beyond 2^53 keeps its digits, as text: a number would lose them (Postmark's 64-bit ids). */
const keepingLongIntegers = (digits: string): number | string => {
  const value = Number(digits);
  return /^-?\d+$/.test(digits) && !Number.isSafeInteger(value) ? digits : value;
};

/**
 * The JSON body. Numbers keep their value; an integer too long for a JavaScript number (16 digits and more)
 * keeps its digits as text, so two provider ids that differ in their last digits stay two ids. The usual
 * parser reads bodies without such a run of digits (almost all, and faster).
 */
export function jsonBody(request: InboundRequest): unknown {
  const text = request.rawBody.toString('utf8');
  try {
    return /\d{16}/.test(text)
      ? // A key given twice keeps its last value, as JSON.parse does: both parsers read a body alike.
        parseLossless(text, null, { parseNumber: keepingLongIntegers, onDuplicateKey: ({ newValue }) => newValue })
      : JSON.parse(text);
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
/**
 * A table's own entry for a name a provider sent, else undefined: `table[name]` would answer the object
 * prototype's members for names such as `constructor` or `__proto__`.
 */
export const entryOf = <T>(table: Readonly<Record<string, T>>, name: unknown): T | undefined =>
  typeof name === 'string' && Object.hasOwn(table, name) ? table[name] : undefined;

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
