/**
 * The events an outbound webhook can subscribe to (docs/decisions.md, Outbound webhooks, lists each
 * payload). Mail events are per recipient of a real send: `opened` and `clicked` tell of every open and
 * click, `first: true` on a mail's first of each (as the message's unique figures count them).
 */
export const WEBHOOK_EVENTS = [
  'sent',
  'delivered',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'unsubscribed',
  'subscriber.created',
  'subscriber.unsubscribed',
  'message.sent',
] as const;

export type WebhookEventName = (typeof WEBHOOK_EVENTS)[number];

/** The name of the event `POST /webhooks/{id}/test` sends; nobody subscribes to it. */
export const TEST_EVENT = 'webhook.test';
