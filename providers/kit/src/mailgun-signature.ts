import { constantTimeEqual, hmacSha256 } from './crypto';
import { badSignature, ProviderError } from './errors';
import { isObject } from './request';
import { checkSignedTime, SignedTimeWindow } from './signed-time';
import type { VerifyContext } from './types';

/**
 * How far a signed timestamp may be from now. Behind: 9 hours, since Mailgun retries a failed webhook for
 * 8 hours (10 min, 10 min, 15 min, 30 min, 1 h, 2 h, 4 h) and may send a retry with the signature of its
 * first try; ahead: 5 minutes of clock skew. Its samples check 15 s, which would refuse every such retry.
 */
export const MAILGUN_WINDOW: SignedTimeWindow = { maxAgeSeconds: 9 * 3600, maxAheadSeconds: 300 };
/** @deprecated kit 1.0's name, kept for adapters that import it: the window behind now (MAILGUN_WINDOW). */
export const MAILGUN_MAX_AGE_SECONDS = MAILGUN_WINDOW.maxAgeSeconds;

/**
 * Mailgun's webhook signature, used by more than one adapter: hex HMAC-SHA-256 keyed with the secret over
 * the timestamp followed by the token, compared in constant time; a timestamp outside the window is stale
 * and a token seen before (once the signature holds) is a replay. The window behind now is MAILGUN_WINDOW's,
 * shortened to what the replay guard remembers (`rememberedSeconds`): Mailgun signs no body, so a token
 * its guard forgot (a process restarted, another process) must not verify again. `parent-signature`
 * (a subaccount's event signed with the primary account's key) is not taken: the subaccount's holder
 * receives those blocks and could post them to the primary's endpoint with a body of their own.
 */
export async function verifyMailgunSignature(
  fields: { timestamp?: unknown; token?: unknown; signature?: unknown },
  secret: string,
  context: VerifyContext,
): Promise<void> {
  const { token, signature } = fields;
  const timestamp = typeof fields.timestamp === 'number' ? String(fields.timestamp) : fields.timestamp;
  if (typeof timestamp !== 'string' || typeof token !== 'string' || typeof signature !== 'string' || !token)
    throw badSignature('timestamp, token and signature are required');
  const remembered = context.replay.rememberedSeconds ?? Infinity;
  checkSignedTime(timestamp, context.now(), {
    maxAgeSeconds: Math.min(MAILGUN_WINDOW.maxAgeSeconds, remembered),
    maxAheadSeconds: MAILGUN_WINDOW.maxAheadSeconds,
  });
  if (!constantTimeEqual(hmacSha256(secret, timestamp, token).toString('hex'), signature.toLowerCase()))
    throw badSignature();
  // Remembered for as long as its timestamp is accepted: Mailgun signs no body, so a token seen again
  // within the window could carry another one.
  if (await context.replay.seen(`mailgun:${token}`, MAILGUN_WINDOW.maxAgeSeconds + MAILGUN_WINDOW.maxAheadSeconds))
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
