import crypto from 'node:crypto';

/** A Standard Webhooks secret as shown to a receiver: `whsec_` and the key's base64. */
export const whsecOf = (key: Buffer): string => `whsec_${key.toString('base64')}`;

/** The fewest key bytes a secret may give: `whsec_` and text that decodes to nothing signed with an empty key. */
export const MIN_KEY_BYTES = 16;

/** The key bytes of a secret: after `whsec_` its base64, otherwise the text's UTF-8 bytes. */
export const keyOfSecret = (secret: string): Buffer =>
  secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret, 'utf8');

/**
 * The headers of a delivery signed the Standard Webhooks way (standardwebhooks.com): `webhook-id`,
 * `webhook-timestamp` (unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
 */
export function standardWebhookHeaders(key: Buffer, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
}
