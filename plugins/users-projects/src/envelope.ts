import { successBody, successEnvelopeSchema } from '@switchboard/core';

/** This spec's envelope: `{success, data, meta}`; lists add page, per_page and total to meta. */
export const single = <T>(data: T, version: string) => successBody(data, version);

export const page = <T>(data: T[], p: { page: number; per_page: number; total: number }, version: string) =>
  successBody(data, version, { page: p.page, per_page: p.per_page, total: p.total });

const metaSchema = {
  type: 'object',
  required: ['timestamp', 'version'],
  properties: { timestamp: { type: 'string', format: 'date-time' }, version: { type: 'string' } },
} as const;

const pageMetaSchema = {
  type: 'object',
  required: ['page', 'per_page', 'total', 'timestamp', 'version'],
  properties: {
    page: { type: 'integer' },
    per_page: { type: 'integer' },
    total: { type: 'integer' },
    ...metaSchema.properties,
  },
} as const;

export const singleSchema = (data: object) => successEnvelopeSchema(data, metaSchema);
export const pageSchema = (item: object) => successEnvelopeSchema({ type: 'array', items: item }, pageMetaSchema);
