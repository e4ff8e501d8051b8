import { sendSchema } from '../../sending';
import { emailSchema, nullableTimestamp, pageQueryProperties, Shape, timestamp, Validated } from '@switchboard/core';

export const MESSAGE_STATUSES = ['draft', 'pending', 'active', 'sent', 'cancelled'] as const;

const properties = {
  name: { type: 'string', minLength: 1, maxLength: 191 },
  subject: { type: 'string', minLength: 1, maxLength: 255 },
  preheader: { type: ['string', 'null'], maxLength: 255 },
  content_html: { type: ['string', 'null'], maxLength: 500_000 },
  content_text: { type: ['string', 'null'], maxLength: 500_000 },
  from_name: { type: ['string', 'null'], maxLength: 191 },
  from_email: { anyOf: [emailSchema, { type: 'null' }] },
  track_opens: {
    type: 'boolean',
    description: "count opens with a pixel in the HTML part (default: the organization's message-defaults, else false)",
  },
  track_clicks: {
    type: 'boolean',
    description:
      "count clicks by sending links through a redirect (default: the organization's message-defaults, else false)",
  },
} as const;

export const createMessageBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'subject'],
  properties,
} as const;
export const updateMessageBody = { type: 'object', additionalProperties: false, minProperties: 1, properties } as const;

export const listMessagesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    status: { enum: MESSAGE_STATUSES },
    from_date: { type: 'string', format: 'date', description: 'created on or after this day (UTC)' },
    to_date: { type: 'string', format: 'date', description: 'created on or before this day (UTC)' },
  },
} as const;

export const messageSchema = {
  type: 'object',
  required: [
    'id',
    'name',
    'subject',
    'preheader',
    'content_html',
    'content_text',
    'from_name',
    'from_email',
    'status',
    'track_opens',
    'track_clicks',
    'sent_at',
    'created_at',
    'updated_at',
    'stats',
    'open_rate',
    'click_rate',
  ],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    subject: { type: 'string' },
    preheader: { type: ['string', 'null'] },
    content_html: { type: ['string', 'null'] },
    content_text: { type: ['string', 'null'] },
    from_name: { type: ['string', 'null'] },
    from_email: { type: ['string', 'null'] },
    status: { enum: MESSAGE_STATUSES },
    track_opens: { type: 'boolean' },
    track_clicks: { type: 'boolean' },
    sent_at: nullableTimestamp,
    created_at: timestamp,
    updated_at: timestamp,
    stats: {
      type: 'object',
      required: ['sent', 'opened', 'clicked', 'unsubscribed', 'unique_opened', 'unique_clicked'],
      properties: {
        sent: { type: 'integer' },
        opened: { type: 'integer', description: 'every open event (count_read)' },
        clicked: { type: 'integer', description: 'every click event (count_clicked)' },
        unsubscribed: { type: 'integer' },
        unique_opened: { type: 'integer', description: 'mails opened at least once (a click counts as an open)' },
        unique_clicked: { type: 'integer', description: 'mails clicked at least once' },
      },
    },
    open_rate: { type: 'number', description: 'unique_opened / sent, in percent, two decimals' },
    click_rate: { type: 'number', description: 'unique_clicked / sent, in percent, two decimals' },
    delivery: {
      anyOf: [sendSchema, { type: 'null' }],
      description:
        'the latest send of the message, in GET /messages/{id} (null elsewhere): its status and recipients queued, sent, failed',
    },
  },
} as const;

/** Request and response shapes, derived from the schemas above. */
export type Message = Shape<typeof messageSchema>;
export type NewMessage = Validated<typeof createMessageBody>;
export type MessageChanges = Validated<typeof updateMessageBody>;
export type MessageListQuery = Validated<typeof listMessagesQuery>;
