import crypto from 'node:crypto';
import {
  badSignature,
  constantTimeEqual,
  header,
  hmacSha256,
  checkSignedTime,
  InboundRequest,
  SignedTimeWindow,
} from '@switchboard/provider-kit';

export const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';
/**
 * SendGrid states no window. It retries a failed POST for 24 hours and does not say whether a retry is
 * signed anew: 25 hours behind now, so that none is refused once our endpoint is back; 5 minutes ahead.
 * The signature covers the body, and each event is recorded once by its id, so a replay within the
 * window changes nothing.
 */
export const SENDGRID_WINDOW: SignedTimeWindow = { maxAgeSeconds: 25 * 3600, maxAheadSeconds: 300 };

const ARMOURED = /^-----BEGIN [A-Z0-9 ]+-----/;
const PUBLIC_PEM = /^-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----$/;
const publicKeys = new Map<string, crypto.KeyObject | 'not a key' | null>();

/**
 * The endpoint secret as an ECDSA P-256 public key: SendGrid's verification key as its page shows it (base64
 * DER), or armoured as PEM (`PUBLIC KEY`, as @sendgrid/eventwebhook's `convertPublicKeyToECDSA` makes it;
 * its lines may be joined). Session 36: the PEM form was taken for an HMAC secret, and SendGrid's every
 * request refused. Null: an HMAC secret (our contract); 'not a key': anything else armoured (a private key
 * pasted by mistake, a certificate, another curve), which verifies nothing.
 */
function verificationKey(secret: string): crypto.KeyObject | 'not a key' | null {
  if (!publicKeys.has(secret)) {
    const text = secret.trim();
    const armoured = ARMOURED.test(text);
    const body = armoured ? PUBLIC_PEM.exec(text)?.[1].replace(/\s+/g, '') : secret;
    let key: crypto.KeyObject | 'not a key' | null = armoured ? 'not a key' : null;
    try {
      const parsed =
        body === undefined
          ? null
          : crypto.createPublicKey({ key: Buffer.from(body, 'base64'), format: 'der', type: 'spki' });
      if (parsed?.asymmetricKeyType === 'ec' && parsed.asymmetricKeyDetails?.namedCurve === 'prime256v1') key = parsed;
    } catch {
      // Not a key: an HMAC secret, or armour that cannot be read.
    }
    if (publicKeys.size > 1000) publicKeys.clear();
    publicKeys.set(secret, key);
  }
  return publicKeys.get(secret)!;
}

/**
 * The signature covers the timestamp header's text followed by the raw body: base64 HMAC-SHA-256 keyed
 * with the secret (our contract), or ECDSA with SHA-256 when the secret is SendGrid's public key (base64 DER
 * or PEM).
 */
export function verifySignature(request: InboundRequest, secret: string, now: Date): void {
  const signature = header(request, SIGNATURE_HEADER);
  const timestamp = header(request, TIMESTAMP_HEADER);
  if (!signature || !timestamp) throw badSignature('The signature or its timestamp header is missing');
  checkSignedTime(timestamp, now, SENDGRID_WINDOW);
  const key = verificationKey(secret);
  if (key === 'not a key') throw badSignature("The endpoint's secret is PEM but not an ECDSA P-256 public key");
  const valid = key
    ? crypto.verify(
        'sha256',
        Buffer.concat([Buffer.from(timestamp), request.rawBody]),
        key,
        Buffer.from(signature, 'base64'),
      )
    : constantTimeEqual(hmacSha256(secret, timestamp, request.rawBody).toString('base64'), signature);
  if (!valid) throw badSignature();
}
