import crypto from 'node:crypto';

/**
 * Whether two secrets or signatures are equal, in time that depends on neither: both are hashed first,
 * so different lengths compare like any other difference.
 */
export function constantTimeEqual(a: string | Buffer, b: string | Buffer): boolean {
  const digest = (value: string | Buffer) => crypto.createHash('sha256').update(value).digest();
  return crypto.timingSafeEqual(digest(a), digest(b));
}

export function hmacSha256(key: string, ...parts: Array<string | Buffer>): Buffer {
  const mac = crypto.createHmac('sha256', key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** A stable id for an event the provider gives none: the hash of its JSON. */
export const contentHash = (value: unknown): string =>
  crypto.createHash('sha256').update(JSON.stringify(value)).digest('hex');
