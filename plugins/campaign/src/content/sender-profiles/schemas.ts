import { emailSchema, Shape, timestamp, Validated } from '@switchboard/core';

const email = emailSchema;
const properties = {
  name: { type: 'string', minLength: 1, maxLength: 191 },
  from_name: { type: 'string', minLength: 1, maxLength: 191 },
  from_email: email,
  reply_to_email: { anyOf: [email, { type: 'null' }] },
  is_default: { type: 'boolean' },
} as const;

export const createSenderProfileBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'from_name', 'from_email'],
  properties: { ...properties, is_default: { type: 'boolean', default: false } },
} as const;

export const updateSenderProfileBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties,
} as const;

export const senderProfileSchema = {
  type: 'object',
  required: ['id', 'name', 'from_name', 'from_email', 'reply_to_email', 'is_default', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    from_name: { type: 'string' },
    from_email: { type: 'string' },
    reply_to_email: { type: ['string', 'null'] },
    is_default: { type: 'boolean' },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

/** Request and response shapes, derived from the schemas above. */
export type SenderProfile = Shape<typeof senderProfileSchema>;
export type NewSenderProfile = Validated<typeof createSenderProfileBody>;
export type SenderProfileChanges = Validated<typeof updateSenderProfileBody>;
