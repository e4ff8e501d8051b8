import { emailSchema, Shape, Validated } from '@switchboard/core';

export const changelogSubscribeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: {
    email: emailSchema,
    webhook_url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 512 },
  },
} as const;

export const changelogSubscriptionSchema = {
  type: 'object',
  required: ['id', 'email', 'webhook_url', 'created_at'],
  properties: {
    id: { type: 'integer' },
    email: { type: 'string' },
    webhook_url: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

/** The subscribe answer: the subscription and the key its webhook notices are signed with. */
export const changelogSubscribedSchema = {
  type: 'object',
  required: [...changelogSubscriptionSchema.required, 'signing_secret', 'confirmed'],
  properties: {
    ...changelogSubscriptionSchema.properties,
    confirmed: {
      type: 'boolean',
      description:
        'Whether the address has confirmed it wants the notices; until it does (a mail asks it), and after it unsubscribed until it confirms again, nothing is sent',
    },
    signing_secret: {
      type: ['string', 'null'],
      description:
        'With a webhook_url: the Standard Webhooks secret (whsec_...) its notices are signed with, the same on every answer; null without one',
    },
  },
} as const;

/** Request and response shapes, derived from the schemas above. */
export type ChangelogSubscribe = Validated<typeof changelogSubscribeBody>;
export type ChangelogSubscription = Shape<typeof changelogSubscriptionSchema>;
export type ChangelogSubscribed = Shape<typeof changelogSubscribedSchema>;
