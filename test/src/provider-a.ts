import crypto from 'node:crypto';

/**
 * provider_a's (SendGrid's) signed request headers for a body, at a time (docs/providers.md): what the
 * process tests post to a real `serve`. The plugin's own tests sign with campaign's provider-signing.ts.
 */
export function providerAHeaders(secret: string, body: string, at = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return {
    'content-type': 'application/json',
    'x-twilio-email-event-webhook-timestamp': timestamp,
    'x-twilio-email-event-webhook-signature': crypto
      .createHmac('sha256', secret)
      .update(timestamp)
      .update(body)
      .digest('base64'),
  };
}
