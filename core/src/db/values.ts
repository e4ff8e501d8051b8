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
