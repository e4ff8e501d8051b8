import { validationError, type Validated } from '@switchboard/core';

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
  description: 'values are strings or arrays of strings; at most 65,535 bytes as JSON',
} as const;

export type MetaData = Validated<typeof metaDataSchema>;

/** The most meta_data's JSON text may take: what MySQL's TEXT column holds. */
export const META_DATA_MAX_BYTES = 65_535;

/**
 * Refuses meta_data whose JSON text is over META_DATA_MAX_BYTES (422 `meta_data` / `maxLength`): the
 * schema's counts allow more than the column holds (docs/decisions.md, Subscribers).
 */
export function assertMetaDataFits(meta: MetaData | undefined): void {
  if (meta !== undefined && Buffer.byteLength(JSON.stringify(meta)) > META_DATA_MAX_BYTES)
    throw validationError('meta_data', 'maxLength', `meta_data is at most ${META_DATA_MAX_BYTES} bytes as JSON`);
}
