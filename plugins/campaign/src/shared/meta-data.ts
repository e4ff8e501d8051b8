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

/** meta_data as answers show it: the values' shape, which a generated client types (`Record<string, string | string[]>`). */
export const shownMetaDataSchema = {
  type: 'object',
  additionalProperties: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
  description: metaDataSchema.description,
} as const;

/** The most meta_data's JSON text may take: what MySQL's TEXT column holds. */
export const META_DATA_MAX_BYTES = 65_535;

/**
 * Refuses meta_data whose JSON text is over META_DATA_MAX_BYTES (422 `meta_data` / `maxLength`): the
 * schema's counts allow more than the column holds (docs/decisions.md, Subscribers).
 */
export function assertMetaDataFits(meta: MetaData | undefined): void {
  if (meta === undefined || mostBytes(meta) <= META_DATA_MAX_BYTES) return;
  if (Buffer.byteLength(JSON.stringify(meta)) > META_DATA_MAX_BYTES)
    throw validationError('meta_data', 'maxLength', `meta_data is at most ${META_DATA_MAX_BYTES} bytes as JSON`);
}

/**
 * The most bytes the JSON text can take, without writing it (an import checks every row): a character is
 * at most 6 bytes of JSON (`\uXXXX`), and each key or value adds its quotes and separators.
 */
function mostBytes(meta: MetaData): number {
  let bytes = 2;
  for (const [key, value] of Object.entries(meta)) {
    bytes += key.length + 4;
    for (const text of typeof value === 'string' ? [value] : value) bytes += text.length * 6 + 3;
    bytes += 2;
  }
  return bytes;
}
