import crypto from 'node:crypto';
import { badSignature, ProviderError } from './errors';
import { constantTimeEqual } from './crypto';
import { header } from './request';
import type { InboundRequest } from './types';
import { checkSignedTime, type SignedTimeWindow } from './signed-time';

/**
 * Standard Webhooks (standardwebhooks.com), the scheme Svix signs with (Resend, Clerk and others):
 * `webhook-id`, `webhook-timestamp` (UNIX seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "id.timestamp.body">`, several space-separated while a key is rotated. Svix names the same headers
 * `svix-id`, `svix-timestamp`, `svix-signature`. The host signs its outbound webhooks with the same code.
 */

/** A secret as a receiver is shown it: `whsec_` and the key's base64. */
export const whsecOf = (key: Buffer): string => `whsec_${key.toString('base64')}`;

/** The key bytes of a secret: after `whsec_` its base64, otherwise the text's UTF-8 bytes. */
export const keyOfSecret = (secret: string): Buffer =>
  secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');

/**
 * A receiver's key as the standard reads its secret: base64, with or without `whsec_` (as the
 * standardwebhooks library does). The host's own outbound secrets also take plain text (keyOfSecret).
 */
const standardKeyOf = (secret: string): Buffer => Buffer.from(secret.replace(/^whsec_/, ''), 'base64');

/** The base64 signature of a delivery (without `v1,`). */
export const standardWebhookSignature = (key: Buffer, id: string, timestamp: string, body: string | Buffer): string =>
  crypto.createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');

/** The headers of a JSON delivery signed the Standard Webhooks way. */
export function standardWebhookHeaders(key: Buffer, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${standardWebhookSignature(key, id, timestamp, body)}`,
  };
}

export interface StandardWebhookCheck {
  /** The endpoint's secret as the provider shows it: base64, with or without `whsec_`. */
  secret: string;
  now: Date;
  window: SignedTimeWindow;
  /** The headers' prefix: `webhook` (the standard's) or `svix`. */
  prefix?: 'webhook' | 'svix';
}

/**
 * Verifies a Standard Webhooks request: its three headers present, its timestamp within the window, and
 * one of its `v1` signatures that of the raw body with the secret. Answers the delivery's id, which the
 * sender keeps on every retry (a stable provider event id).
 */
export function verifyStandardWebhook(
  request: InboundRequest,
  check: StandardWebhookCheck,
): { id: string; timestamp: string } {
  const prefix = check.prefix ?? 'webhook';
  const id = header(request, `${prefix}-id`);
  const timestamp = header(request, `${prefix}-timestamp`);
  const signatures = header(request, `${prefix}-signature`);
  if (!id || !timestamp || !signatures)
    throw new ProviderError(
      'signature',
      `The ${prefix}-id, ${prefix}-timestamp and ${prefix}-signature headers are required`,
    );
  checkSignedTime(timestamp, check.now, check.window);
  const key = standardKeyOf(check.secret);
  if (!key.length) throw badSignature('The endpoint secret gives no key');
  const expected = standardWebhookSignature(key, id, timestamp, request.rawBody);
  const given = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice(3));
  if (!given.some((s) => constantTimeEqual(s, expected))) throw badSignature();
  return { id, timestamp };
}
