import type { Validated } from '@switchboard/core';

/** A subscriber's meta_data: what search, merge tags and the subscriber API all read. */
export const metaDataSchema = {
  type: 'object',
  maxProperties: 50,
  propertyNames: { pattern: '^[A-Za-z0-9_-]{1,64}$' },
  additionalProperties: {
    anyOf: [
      { type: 'string', maxLength: 191 },
      { type: 'array', maxItems: 50, items: { type: 'string', maxLength: 191 } },
    ],
  },
  description: 'values are strings or arrays of strings',
} as const;

export type MetaData = Validated<typeof metaDataSchema>;
