import { nameSchema, Shape, timestamp, Validated } from '@switchboard/core';
import { PROVIDER_KEY_PATTERN } from '../provider-adapters';

const secret = { type: 'string', minLength: 8, maxLength: 4096 } as const;
const topicArns = {
  type: 'array',
  description: 'provider_d: the SNS topics whose messages this endpoint takes',
  maxItems: 20,
  uniqueItems: true,
  items: { type: 'string', pattern: '^arn:aws[a-z-]*:sns:[a-z0-9-]+:\\d{12}:[A-Za-z0-9_-]{1,256}$' },
} as const;
const properties = {
  name: nameSchema,
  secret,
  is_active: { type: 'boolean' },
  topic_arns: topicArns,
} as const;

/** The body of a new endpoint: its provider is one of the enabled adapters' keys (this engine's list). */
export const createInboundWebhookBody = (enabledProviders: string[]) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['provider', 'name'],
    properties: {
      provider: { type: 'string', enum: enabledProviders, description: 'the key of an enabled provider adapter' },
      ...properties,
      is_active: { type: 'boolean', default: true },
    },
  }) as const;

export const updateInboundWebhookBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties,
} as const;

/** An endpoint as responses show it: its secret only in the answer to its creation or a new secret. */
export const inboundWebhookSchema = {
  type: 'object',
  required: [
    'id',
    'organization_id',
    'provider',
    'name',
    'url',
    'has_secret',
    'is_active',
    'topic_arns',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'integer' },
    organization_id: { type: 'integer' },
    provider: { type: 'string', pattern: PROVIDER_KEY_PATTERN },
    name: { type: 'string' },
    url: { type: 'string', description: 'The address to configure at the provider' },
    secret: { type: 'string', description: 'Only when created or given a new secret; stored sealed' },
    has_secret: { type: 'boolean' },
    is_active: { type: 'boolean' },
    topic_arns: { type: 'array', items: { type: 'string' } },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export type InboundWebhook = Shape<typeof inboundWebhookSchema>;
export type NewInboundWebhook = Validated<ReturnType<typeof createInboundWebhookBody>>;
export type InboundWebhookChanges = Validated<typeof updateInboundWebhookBody>;
