import { emailSchema, nullableTimestamp, Shape, Validated } from '@switchboard/core';

/** How many lists one send may name (each is checked and joined). */
import { MAX_SEND_LISTS } from '../shared/send-limits';

export const sendBody = {
  type: 'object',
  additionalProperties: false,
  required: ['list_ids'],
  properties: {
    list_ids: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_SEND_LISTS,
      uniqueItems: true,
      items: { type: 'integer', minimum: 1, maximum: 4_294_967_295 },
      description: 'the lists whose active subscribers receive the message, each address once',
    },
    scheduled_at: {
      type: 'string',
      format: 'date-time',
      description: 'a time in the future: the message waits as pending until then; absent: it is sent now',
    },
    test_mode: {
      type: 'boolean',
      default: false,
      description:
        'render and record the send for every recipient without delivering any mail; the message stays as it is',
    },
  },
} as const;

export const testSendBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: { email: emailSchema },
} as const;

export const SEND_STATUSES = ['pending', 'active', 'paused', 'sent', 'cancelled'] as const;

/** One send of a message: what `POST /messages/{id}/send` answers and `GET /messages/{id}` shows as `delivery`. */
export const sendSchema = {
  type: 'object',
  required: [
    'id',
    'status',
    'test_mode',
    'list_ids',
    'scheduled_at',
    'recipients',
    'queued',
    'sent',
    'failed',
    'skipped',
  ],
  properties: {
    id: { type: 'integer' },
    status: { enum: SEND_STATUSES },
    test_mode: { type: 'boolean' },
    list_ids: { type: 'array', items: { type: 'integer' } },
    scheduled_at: nullableTimestamp,
    recipients: {
      type: 'integer',
      description: 'the recipients of the send; before a pending send starts, those the lists have now',
    },
    queued: { type: 'integer', description: 'recipients not handed to SMTP yet' },
    sent: { type: 'integer', description: 'mails SMTP accepted (in test mode: rendered)' },
    failed: { type: 'integer', description: 'recipients SMTP refused for good' },
    skipped: { type: 'integer', description: 'recipients who unsubscribed or bounced before their turn' },
    pause_reason: { type: ['string', 'null'] },
    waiting_since: {
      ...nullableTimestamp,
      description:
        'while the mail of an active send cannot be handed over (the SMTP relay out of reach, the outbox disk full), or waits for the claim of a worker that stopped: since when; null once mail passes again',
    },
    waiting_reason: {
      type: ['string', 'null'],
      description:
        'why it waits: the last error of handing mail over (its recipients stay queued, no try spent), or the recipients a stopped worker had claimed and when they are sent again',
    },
    started_at: nullableTimestamp,
    finished_at: nullableTimestamp,
  },
} as const;

export type SendRequest = Validated<typeof sendBody>;
export type Send = Shape<typeof sendSchema>;
