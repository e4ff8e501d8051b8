import { constantTimeEqual } from './crypto';
import { badSignature } from './errors';
import { header } from './request';
import type { InboundRequest } from './types';

/**
 * Checks a request's `Authorization` header against the endpoint's secret, for providers that sign nothing
 * and send credentials instead: HTTP Basic (`user:password` is the secret) and, where the provider lets the
 * user set one, a bearer token (the token is the secret). Constant time.
 */
export function verifyCredentials(
  request: InboundRequest,
  secret: string,
  schemes: ReadonlyArray<'basic' | 'bearer'>,
): void {
  const match = /^(\w+)\s+(\S+)$/.exec(header(request, 'authorization') ?? '');
  const scheme = match?.[1].toLowerCase();
  if (!match || !schemes.includes(scheme as 'basic' | 'bearer')) {
    const names = schemes.map((s) => (s === 'basic' ? 'HTTP Basic credentials' : 'a bearer token')).join(' or ');
    throw badSignature(`Missing ${names}`);
  }
  const given = scheme === 'basic' ? Buffer.from(match[2], 'base64').toString('utf8') : match[2];
  if (!constantTimeEqual(given, secret)) throw badSignature('The credentials do not match');
}
