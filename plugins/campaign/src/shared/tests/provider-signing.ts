import crypto from 'node:crypto';

/** provider_a's (SendGrid's) signature headers of a request body at a time (docs/providers.md). */
export const signProviderA = (secret: string, body: string, at = new Date()) => {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return {
    'x-twilio-email-event-webhook-timestamp': timestamp,
    'x-twilio-email-event-webhook-signature': crypto
      .createHmac('sha256', secret)
      .update(timestamp)
      .update(body)
      .digest('base64'),
  };
};
