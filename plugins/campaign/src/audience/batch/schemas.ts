import { CHECKED_ALONE, emailSchema, idSchema, Shape, Validated } from '@switchboard/core';
import { createSubscriberBody, profileProperties } from '../subscribers';

/** Requests above this many rows are refused whole (VALIDATION_ERROR, rule maxItems). */
export const MAX_BATCH = 1000;

export const batchRowSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['email'],
  properties: { email: createSubscriberBody.properties.email, ...profileProperties },
} as const;

export const batchUpdateRowSchema = {
  type: 'object',
  additionalProperties: false,
  description: 'names the subscriber by id or by email',
  properties: {
    id: idSchema,
    email: emailSchema,
    ...profileProperties,
  },
} as const;

/** The request shape; each row is then checked on its own so one bad row fails alone. */
export const batchCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['subscribers'],
  properties: {
    subscribers: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH,
      items: { type: 'object', [CHECKED_ALONE]: batchRowSchema },
    },
    lists: {
      type: 'array',
      items: idSchema,
      uniqueItems: true,
      maxItems: 100,
      description: 'added to every row',
    },
    skip_confirmation: {
      type: 'boolean',
      default: false,
      description: 'true: new subscribers are active; false: unconfirmed, with a double opt-in mail',
    },
  },
} as const;

export const batchUpdateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['subscribers'],
  properties: {
    subscribers: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH,
      items: { type: 'object', [CHECKED_ALONE]: batchUpdateRowSchema },
    },
  },
} as const;

export const batchDeleteBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    ids: { type: 'array', maxItems: MAX_BATCH, items: idSchema },
    emails: { type: 'array', maxItems: MAX_BATCH, items: { type: 'string', maxLength: 191 } },
  },
} as const;

const rowError = {
  type: 'object',
  required: ['index', 'email', 'field', 'rule', 'message'],
  properties: {
    index: { type: 'integer' },
    email: { type: ['string', 'null'] },
    field: { type: 'string' },
    rule: { type: 'string' },
    message: { type: 'string' },
  },
} as const;

export const batchResultSchema = {
  type: 'object',
  required: ['updated', 'failed', 'errors'],
  properties: {
    created: { type: 'integer' },
    updated: { type: 'integer' },
    failed: { type: 'integer' },
    errors: { type: 'array', items: rowError },
  },
} as const;

export const batchDeleteResultSchema = {
  type: 'object',
  required: ['deleted', 'not_found'],
  properties: { deleted: { type: 'integer' }, not_found: { type: 'integer' } },
} as const;

/** Request and response shapes, derived from the schemas above. */
export type BatchCreate = Validated<typeof batchCreateBody>;
export type BatchRow = Validated<typeof batchRowSchema>;
export type BatchUpdateRow = Validated<typeof batchUpdateRowSchema>;
export type BatchDelete = Validated<typeof batchDeleteBody>;
export type RowError = Shape<typeof rowError>;
/** `created` only in the answer of a batch that creates. */
export type BatchOutcome = Shape<typeof batchResultSchema>;
export type BatchDeleteResult = Shape<typeof batchDeleteResultSchema>;
