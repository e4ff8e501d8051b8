/**
 * Row values read back differ by driver: SQLite returns dates as epoch milliseconds and
 * booleans as 0/1, MySQL returns Date objects and 0/1. These read them the same way.
 */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  if (typeof value === 'number' || typeof value === 'bigint') return new Date(Number(value));
  if (typeof value === 'string') {
    const asNumber = Number(value);
    return Number.isFinite(asNumber) && /^\d+$/.test(value) ? new Date(asNumber) : new Date(value);
  }
  throw new Error(`Not a date value: ${String(value)}`);
}

export const toIso = (value: unknown): string | null => toDate(value)?.toISOString() ?? null;

export const toBool = (value: unknown): boolean => value === true || value === 1 || value === '1';

export function parseJson<T>(value: unknown, fallback: T): T {
  if (value === null || value === undefined || value === '') return fallback;
  if (typeof value !== 'string') return value as T;
  return JSON.parse(value) as T;
}

/** The id of a row just inserted, whatever the driver returns. */
export function insertedId(result: unknown): number {
  const first = Array.isArray(result) ? result[0] : result;
  return typeof first === 'object' && first !== null ? Number((first as { id: unknown }).id) : Number(first);
}

/** A text column's value: the drivers hand back strings (a Buffer only for binary columns). */
export function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  throw new Error(`Not a text value: ${String(value)}`);
}

export const toNullableText = (value: unknown): string | null =>
  value === null || value === undefined ? null : toText(value);

/** An integer column: MySQL hands back BIGINT as a string or bigint, SQLite as a number. */
export function toInt(value: unknown): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`Not an integer value: ${String(value)}`);
  return n;
}

export const toNullableInt = (value: unknown): number | null =>
  value === null || value === undefined ? null : toInt(value);

/** A column holding one of a fixed set of values (an enum written by this code). */
export function toOneOf<T extends string>(value: unknown, allowed: readonly T[]): T {
  const text = toText(value);
  if (!(allowed as readonly string[]).includes(text)) throw new Error(`Not one of ${allowed.join(', ')}: ${text}`);
  return text as T;
}

/** A timestamp column that is never null, as an ISO string. */
export function toIsoRequired(value: unknown): string {
  const iso = toIso(value);
  if (iso === null) throw new Error('Missing timestamp');
  return iso;
}
