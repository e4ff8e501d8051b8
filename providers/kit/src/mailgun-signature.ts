import { constantTimeEqual, hmacSha256 } from './crypto';
import { badSignature, ProviderError } from './errors';
import { isObject } from './request';
import type { VerifyContext } from './types';

/** How far a signed timestamp may be from now, either way (Mailgun's samples say 15 s; retries are re-signed). */
export const MAILGUN_MAX_AGE_SECONDS = 300;

/**
 * Mailgun's webhook signature, used by more than one adapter: hex HMAC-SHA-256 keyed with the secret over
 * the timestamp followed by the token, compared in constant time; a timestamp outside the window is stale
 * and a token seen before (once the signature holds) is a replay. An event of a subaccount's domain also
 * carries `parent-signature`, the same made with the primary account's key: either one holding verifies,
 * so one endpoint keyed with the primary account's key takes every subaccount's events.
 */
export async function verifyMailgunSignature(
  fields: { timestamp?: unknown; token?: unknown; signature?: unknown; 'parent-signature'?: unknown },
  secret: string,
  context: VerifyContext,
): Promise<void> {
  const { token, signature } = fields;
  const timestamp = typeof fields.timestamp === 'number' ? String(fields.timestamp) : fields.timestamp;
  if (typeof timestamp !== 'string' || typeof token !== 'string' || typeof signature !== 'string' || !token)
    throw badSignature('timestamp, token and signature are required');
  if (
    !/^\d{1,12}$/.test(timestamp) ||
    Math.abs(context.now().getTime() / 1000 - Number(timestamp)) > MAILGUN_MAX_AGE_SECONDS
  )
    throw new ProviderError('stale', `The timestamp is more than ${MAILGUN_MAX_AGE_SECONDS} s from now`);
  const expected = hmacSha256(secret, timestamp, token).toString('hex');
  const parent = fields['parent-signature'];
  if (
    !constantTimeEqual(expected, signature.toLowerCase()) &&
    !(typeof parent === 'string' && constantTimeEqual(expected, parent.toLowerCase()))
  )
    throw badSignature();
  if (await context.replay.seen(`mailgun:${token}`, 2 * MAILGUN_MAX_AGE_SECONDS))
    throw new ProviderError('replayed', 'This token was used before');
}

/** Mailgun's JSON webhook body: `{signature: {timestamp, token, signature}, "event-data": {...}}`. */
export interface MailgunEnvelope {
  signature: Record<string, unknown>;
  data: Record<string, unknown>;
}

/** The body as Mailgun's JSON envelope, or null when it is not one (used by more than one adapter). */
export function mailgunEnvelopeOf(body: unknown): MailgunEnvelope | null {
  if (!isObject(body) || !isObject(body.signature) || !isObject(body['event-data'])) return null;
  return { signature: body.signature, data: body['event-data'] };
}
