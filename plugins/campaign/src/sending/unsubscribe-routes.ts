import type { PluginApi, PluginContext } from '@switchboard/core';
import { UNSUBSCRIBE_PATH } from '../shared/paths';
import { escapeHtml } from '../shared/html';
import { UnsubscribeService } from './unsubscribe-service';

const tokenQuery = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', minLength: 3, maxLength: 200 } },
} as const;

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;

/**
 * The unsubscribe link of every campaign mail: no API token, the signed token is the proof. GET shows
 * a page asking to confirm (mail scanners open links); POST unsubscribes, from that page's form or as
 * RFC 8058 one-click (`List-Unsubscribe-Post`).
 */
export function unsubscribeRoutes(api: PluginApi, ctx: PluginContext): void {
  const unsubscribes = ctx.container.resolve(UnsubscribeService);
  api
    .group({ prefix: UNSUBSCRIBE_PATH, tag: 'campaign', auth: 'none' })
    .get(
      '/',
      {
        summary: 'The page of an unsubscribe link: asks to confirm',
        query: tokenQuery,
        response: { description: 'an HTML page' },
      },
      async ({ query, ctx: http }) => {
        const { email, unsubscribed } = await unsubscribes.describe(query.token);
        http.type = 'html';
        if (unsubscribed) return page('Unsubscribed', `<p>${escapeHtml(email)} receives no more mail from us.</p>`);
        const action = `${UNSUBSCRIBE_PATH}?token=${encodeURIComponent(query.token)}`;
        return page(
          'Unsubscribe',
          `<p>Stop sending mail to ${escapeHtml(email)}?</p>` +
            `<form method="post" action="${escapeHtml(action)}"><button type="submit">Unsubscribe</button></form>`,
        );
      },
    )
    .post(
      '/',
      {
        summary: 'Unsubscribe (the page form, or RFC 8058 one-click)',
        query: tokenQuery,
        response: { description: 'an HTML page' },
      },
      async ({ query, ctx: http }) => {
        const { email } = await unsubscribes.unsubscribe(query.token);
        http.type = 'html';
        return page('Unsubscribed', `<p>${escapeHtml(email)} receives no more mail from us.</p>`);
      },
    );
}
