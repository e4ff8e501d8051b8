import crypto from 'node:crypto';
import { malformed } from './errors';

/**
 * Whether two secrets or signatures are equal, in time that depends on neither: both are hashed first,
 * so different lengths compare like any other difference.
 */
export function constantTimeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const digest = (value: string | Buffer) => crypto.createHash('sha256').update(value).digest();
  return crypto.timingSafeEqual(digest(a), digest(b));
}

/** An HMAC-SHA256 of the parts in order; the key as text or bytes (a base64 secret decoded). */
export function hmacSha256(key: string | Buffer, ...parts: Array<string | Buffer>): Buffer {
  const mac = crypto.createHmac('sha256', key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** A stable id for an event the provider gives none: the hash of its JSON. */
export const contentHash = (value: unknown): string =>
  crypto.createHash('sha256').update(jsonText(value)).digest('hex');

/**
 * A parsed body's value as JSON text; a value nested too deeply to write (JSON.parse reads what
 * JSON.stringify's stack cannot write back) is a malformed body.
 */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof RangeError) throw malformed('The body is nested too deeply');
    throw err;
  }
}
