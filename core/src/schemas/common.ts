/** Schema pieces every plugin's routes share. */

/** The largest value of an INT UNSIGNED column (MySQL), well inside what JavaScript holds exactly (2^53 - 1). */
export const INT_UNSIGNED_MAX = 4_294_967_295;

/** Ids are INT UNSIGNED on MySQL (knex `increments`) and fit SQLite's 64-bit INTEGER. */
export const MAX_ID = INT_UNSIGNED_MAX;

/** An id in a path, a query or a body. */
export const idSchema = { type: 'integer', minimum: 1, maximum: MAX_ID } as const;

export const idParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: idSchema },
} as const;

/**
 * No table holds more rows than ids, so a later page is empty at any per_page; the largest offset,
 * (MAX_PAGE - 1) * 100, is about 4.3e11: exact in a double and inside both databases' OFFSET.
 */
export const MAX_PAGE = MAX_ID;
export const MAX_PER_PAGE = 100;

export const pageQueryProperties = {
  page: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 },
  per_page: { type: 'integer', minimum: 1, maximum: MAX_PER_PAGE, default: 20 },
} as const;

/**
 * An e-mail address as the server takes it: ajv-formats' `email` (full mode), which wants a dot in the
 * domain, spelled out as a pattern. It stands in for `format: email`, which validators read differently
 * (some refuse a local part over 64 characters, others take `a@com`): the pattern is the one rule.
 */
export const EMAIL_PATTERN =
  "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$";

export const emailSchema = {
  type: 'string',
  pattern: EMAIL_PATTERN,
  maxLength: 191,
  description: 'an e-mail address',
} as const;

/**
 * A name or title, trimmed before it is read: not blank, so a schema-valid `" "` is not refused as
 * empty after the trim (the routes that trim say so to outside validators with `\S`).
 */
export const nameSchema = { type: 'string', minLength: 1, maxLength: 191, pattern: '\\S' } as const;

export const timestamp = { type: 'string', format: 'date-time' } as const;
export const nullableTimestamp = { type: ['string', 'null'], format: 'date-time' } as const;

/** `{success, data, meta}` around a data schema. */
export const successEnvelopeSchema = (data: object, meta: object = { type: 'object' }) => ({
  type: 'object',
  required: ['success', 'data', 'meta'],
  properties: { success: { const: true }, data, meta },
});

export const messageEnvelopeSchema = {
  type: 'object',
  required: ['success', 'message'],
  properties: { success: { const: true }, message: { type: 'string' } },
} as const;
