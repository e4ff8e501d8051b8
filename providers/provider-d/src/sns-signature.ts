import crypto from 'node:crypto';
import { badSignature, entryOf, InboundEndpoint, ProviderError, VerifyContext } from '@switchboard/provider-kit';

const SNS_HOST = /^sns\.[a-z0-9-]{3,}\.amazonaws\.com(\.cn)?$/i;
/** The fields each message type signs, in this order (absent ones skipped). */
export const SIGNED_FIELDS: Record<string, string[]> = {
  Notification: ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'],
  SubscriptionConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
  UnsubscribeConfirmation: ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'],
};
const CERTIFICATES_KEPT = 100;
const keys = new Map<string, crypto.KeyObject>();

/** Whether a URL is Amazon SNS's own (https, sns.<region>.amazonaws.com, no port or credentials). */
export function isSnsUrl(value: unknown, pathEnding = ''): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (
      url.protocol === 'https:' &&
      SNS_HOST.test(url.hostname) &&
      !url.port &&
      !url.username &&
      !url.password &&
      url.pathname.endsWith(pathEnding)
    );
  } catch {
    return false;
  }
}

/** The public key of a PEM certificate; text that is none cannot verify anything (401, not a 500). */
function certificateKey(pem: string): crypto.KeyObject {
  try {
    return new crypto.X509Certificate(pem).publicKey;
  } catch {
    throw badSignature('The signing certificate could not be read');
  }
}

async function publicKeyOf(url: string, context: VerifyContext): Promise<crypto.KeyObject> {
  const known = keys.get(url);
  if (known) return known;
  if (!context.fetchText) throw new ProviderError('forbidden', 'No certificate source is configured');
  const key = certificateKey(await context.fetchText(url));
  if (keys.size >= CERTIFICATES_KEPT) keys.delete(keys.keys().next().value!);
  keys.set(url, key);
  return key;
}

/**
 * An SNS message's signature: version 1 (RSA-SHA1) or 2 (RSA-SHA256) over its signed fields, with the
 * certificate of a SigningCertURL that is Amazon's (never fetched otherwise), from a topic the endpoint
 * allows (`options.topicArns`).
 */
export async function verifySnsSignature(
  envelope: Record<string, unknown>,
  endpoint: InboundEndpoint,
  context: VerifyContext,
): Promise<void> {
  const fields = entryOf(SIGNED_FIELDS, envelope.Type);
  const version = envelope.SignatureVersion;
  if (!fields || (version !== '1' && version !== '2') || typeof envelope.Signature !== 'string' || !envelope.Signature)
    throw badSignature('Type, SignatureVersion (1 or 2) and Signature are required');
  if (!isSnsUrl(envelope.SigningCertURL, '.pem'))
    throw new ProviderError('forbidden', 'SigningCertURL is not an Amazon SNS certificate');
  const topics = endpoint.options?.topicArns;
  if (!Array.isArray(topics) || !topics.includes(envelope.TopicArn))
    throw new ProviderError(
      'forbidden',
      `Topic ${typeof envelope.TopicArn === 'string' ? envelope.TopicArn : '(not a text)'} is not allowed for this endpoint`,
    );
  const signed = fields
    .filter((name) => typeof envelope[name] === 'string')
    .map((name) => `${name}\n${envelope[name] as string}\n`)
    .join('');
  const key = await publicKeyOf(envelope.SigningCertURL, context);
  const valid = crypto.verify(
    version === '1' ? 'sha1' : 'sha256',
    Buffer.from(signed),
    key,
    Buffer.from(envelope.Signature, 'base64'),
  );
  if (!valid) throw badSignature();
}
