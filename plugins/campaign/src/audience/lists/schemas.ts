import { idSchema, Shape, timestamp, Validated } from '@switchboard/core';

const code = {
  type: 'string',
  pattern: '^[a-z0-9][a-z0-9_-]{0,63}$',
  description: 'short slug used in search as list:<code>',
} as const;

export const listSchema = {
  type: 'object',
  required: ['id', 'name', 'code', 'description', 'subscriber_count', 'active_count', 'created_at'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    code: { type: 'string' },
    description: { type: ['string', 'null'] },
    subscriber_count: { type: 'integer' },
    active_count: { type: 'integer' },
    created_at: timestamp,
  },
} as const;

export const createListBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'code'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 191 },
    code,
    description: { type: ['string', 'null'], maxLength: 5000 },
  },
} as const;

export const updateListBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: createListBody.properties,
} as const;

export const membershipBody = {
  type: 'object',
  additionalProperties: false,
  required: ['subscriber_ids'],
  properties: {
    subscriber_ids: {
      type: 'array',
      minItems: 1,
      maxItems: 1000,
      uniqueItems: true,
      items: idSchema,
    },
  },
} as const;

/** Request and response shapes, derived from the schemas above. */
export type List = Shape<typeof listSchema>;
export type NewList = Validated<typeof createListBody>;
export type ListChanges = Validated<typeof updateListBody>;
