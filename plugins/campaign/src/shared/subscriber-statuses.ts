/**
 * Every status a subscriber can have. The order is visible: it is the enum order of the OpenAPI
 * document and the list in the search syntax's error message.
 */
export const SUBSCRIBER_STATUSES = ['active', 'unsubscribed', 'unconfirmed', 'bounced'] as const;

export type SubscriberStatus = (typeof SUBSCRIBER_STATUSES)[number];

export const isSubscriberStatus = (value: string): value is SubscriberStatus =>
  (SUBSCRIBER_STATUSES as readonly string[]).includes(value);
