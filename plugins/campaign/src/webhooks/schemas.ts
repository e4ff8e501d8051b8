import { nullableTimestamp, pageQueryProperties, nameSchema, Shape, timestamp, Validated } from '@switchboard/core';
import { WEBHOOK_EVENTS } from './event-names';

const events = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENTS.length,
  uniqueItems: true,
  items: { type: 'string', enum: [...WEBHOOK_EVENTS] },
} as const;
/** Standard base64, padded: what Standard Webhooks libraries decode after `whsec_` (they throw on anything else). */
export const STANDARD_BASE64 = '(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?';

const properties = {
  name: nameSchema,
  url: {
    type: 'string',
    format: 'uri',
    pattern: '^https?://',
    maxLength: 2048,
    description: 'http(s) address of the receiver',
  },
  events,
  secret: {
    type: 'string',
    minLength: 16,
    maxLength: 255,
    description:
      'Signing secret: whsec_ and the standard, padded base64 of at least 16 key bytes (24 characters; Standard Webhooks), or any other text used as the key (its UTF-8 bytes)',
    // After whsec_, base64 as receivers' libraries decode it (Node's decoder skipped what it could not read).
    if: { pattern: '^whsec_' },
    then: { pattern: `^whsec_${STANDARD_BASE64}$` },
  },
  active: { type: 'boolean' },
} as const;

export const createWebhookBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'url', 'events'],
  properties: { ...properties, active: { type: 'boolean', default: true } },
} as const;

export const updateWebhookBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties,
} as const;

/** A subscription as responses show it: its secret only in the answer that set it. */
export const webhookSchema = {
  type: 'object',
  required: ['id', 'name', 'url', 'events', 'active', 'disabled_reason', 'has_secret', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    url: { type: 'string' },
    events: { type: 'array', items: { type: 'string', enum: [...WEBHOOK_EVENTS] } },
    active: { type: 'boolean' },
    disabled_reason: {
      type: ['string', 'null'],
      description: 'Why the engine deactivated it (deliveries kept failing); null otherwise',
    },
    secret: { type: 'string', description: 'Only in the answer that created or changed it; stored sealed' },
    has_secret: { type: 'boolean' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const deliveryQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    state: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
  },
} as const;

/** One event's delivery to one subscription, as its log shows it. */
export const deliverySchema = {
  type: 'object',
  required: ['id', 'event_id', 'event', 'state', 'attempts', 'response_status', 'latency_ms', 'last_error'],
  properties: {
    id: { type: 'integer' },
    event_id: { type: 'string', description: 'The body id and webhook-id header of every try' },
    event: { type: 'string' },
    state: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
    attempts: { type: 'integer' },
    response_status: { type: ['integer', 'null'], description: "The receiver's status code at the last try" },
    latency_ms: { type: ['integer', 'null'], description: 'How long the last try took' },
    last_error: { type: ['string', 'null'] },
    next_attempt_at: { ...nullableTimestamp, description: 'When a pending delivery is tried next' },
    created_at: timestamp,
    finished_at: nullableTimestamp,
  },
} as const;

/** The answer of POST /webhooks/{id}/test: what the receiver answered the signed test event. */
export const testDeliverySchema = {
  type: 'object',
  required: ['event_id', 'delivered', 'response_status', 'latency_ms', 'error'],
  properties: {
    event_id: { type: 'string' },
    delivered: { type: 'boolean', description: 'The receiver answered 2xx' },
    response_status: { type: ['integer', 'null'] },
    latency_ms: { type: 'integer' },
    error: { type: ['string', 'null'], description: 'Why no answer came (refused address, time-out...)' },
  },
} as const;

export type Webhook = Shape<typeof webhookSchema>;
export type NewWebhook = Validated<typeof createWebhookBody>;
export type WebhookChanges = Validated<typeof updateWebhookBody>;
export type Delivery = Shape<typeof deliverySchema>;
export type DeliveryQuery = Validated<typeof deliveryQuery>;
export type TestDelivery = Shape<typeof testDeliverySchema>;
