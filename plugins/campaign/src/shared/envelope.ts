import type { Context } from 'koa';
import {
  messageBody,
  paginatedBody,
  PageInfo,
  successBody,
  successEnvelopeSchema,
  messageEnvelopeSchema,
} from '@switchboard/core';

/** The campaign spec's envelopes: success with meta, message-only, and paginated. */
export const envelopes = (version: string, publicUrl: string) => ({
  ok: <T>(data: T) => successBody(data, version),
  message: (text: string) => messageBody(text),
  confirmation: <T>(text: string, data: T) => ({ ...messageBody(text), data }),
  page: <T>(ctx: Context, data: T[], page: PageInfo, extra?: Record<string, unknown>) =>
    paginatedBody(data, page, (n) => pageUrl(publicUrl, ctx, n), version, extra),
});

function pageUrl(publicUrl: string, ctx: Context, page: number): string {
  const params = new URLSearchParams(ctx.querystring);
  params.set('page', String(page));
  return `${publicUrl}${ctx.path}?${params.toString()}`;
}

const meta = { type: 'object', properties: { timestamp: { type: 'string' }, version: { type: 'string' } } } as const;

export const okSchema = (data: object) => successEnvelopeSchema(data, meta);
export const confirmationSchema = (data: object) => ({
  ...messageEnvelopeSchema,
  properties: { ...messageEnvelopeSchema.properties, data },
});
export { messageEnvelopeSchema as messageSchema };

export const pageSchema = (item: object) => ({
  type: 'object',
  required: ['success', 'data', 'pagination'],
  properties: {
    success: { const: true },
    data: { type: 'array', items: item },
    pagination: {
      type: 'object',
      properties: {
        total: { type: 'integer' },
        per_page: { type: 'integer' },
        current_page: { type: 'integer' },
        last_page: { type: 'integer' },
        next_page_url: { type: ['string', 'null'] },
        prev_page_url: { type: ['string', 'null'] },
        total_capped: {
          type: 'boolean',
          description: 'true when a search matched more than 10,000 and total says 10000',
        },
      },
    },
    meta,
  },
});
