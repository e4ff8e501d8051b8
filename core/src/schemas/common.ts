/** Schema pieces every plugin's routes share. */
export const idParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id'],
  properties: { id: { type: 'integer', minimum: 1 } },
} as const;

export const pageQueryProperties = {
  page: { type: 'integer', minimum: 1, default: 1 },
  per_page: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
} as const;

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
