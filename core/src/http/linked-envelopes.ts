import type { Context } from 'koa';
import { messageBody, paginatedBody, PageInfo, successBody } from './envelope';
import { messageEnvelopeSchema, successEnvelopeSchema } from '../schemas/common';

/**
 * The envelopes of the token APIs (the campaign spec's, which the servers API follows too): success with
 * meta, message-only, a message with data, and a page whose neighbours are links under PUBLIC_URL.
 */
export const linkedEnvelopes = (version: string, publicUrl: string) => ({
  ok: <T>(data: T) => successBody(data, version),
  message: (text: string) => messageBody(text),
  confirmation: <T>(text: string, data: T) => ({ ...messageBody(text), ...successBody(data, version) }),
  page: <T>(ctx: Context, data: T[], page: PageInfo, extra?: Record<string, unknown>) =>
    paginatedBody(data, page, (n) => pageUrl(publicUrl, ctx, n), version, extra),
});

function pageUrl(publicUrl: string, ctx: Context, page: number): string {
  const params = new URLSearchParams(ctx.querystring);
  params.set('page', String(page));
  return `${publicUrl}${ctx.path}?${params.toString()}`;
}

const meta = { type: 'object', properties: { timestamp: { type: 'string' }, version: { type: 'string' } } } as const;

export const okEnvelopeSchema = (data: object) => successEnvelopeSchema(data, meta);
/** An action's answer: what was done in words, and its data with the meta every success carries (campaign spec §1, §9). */
export const confirmationEnvelopeSchema = (data: object) => ({
  ...messageEnvelopeSchema,
  required: [...messageEnvelopeSchema.required, 'data', 'meta'],
  properties: { ...messageEnvelopeSchema.properties, data, meta },
});

export const pageEnvelopeSchema = (item: object) => ({
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
          description:
            'true when total is a lower bound ("at least"): a search stopped counting (10,000 matches; 1,000 with ' +
            'substrings, or 5,000 candidates confirmed); a page past the counted matches of a search with substrings is a 422',
        },
      },
    },
    meta,
  },
});
