import type { Context } from 'koa';
import { AppError, PluginApi } from '@switchboard/core';
import { escapeHtml } from './html';

/** What an unsubscribe link points at: a campaign subscriber, a changelog subscription. */
export interface Unsubscribable {
  describe(token: string): Promise<{ email: string; unsubscribed: boolean }>;
  unsubscribe(token: string): Promise<{ email: string }>;
}

const tokenQuery = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', minLength: 3, maxLength: 200 } },
} as const;

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
  `<title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;

const HTML_PAGE = { description: 'an HTML page', contentType: 'text/html', schema: { type: 'string' } };
const NOT_VALID_PAGE = {
  404: { description: 'an HTML page: the link is not valid', contentType: 'text/html', schema: { type: 'string' } },
};

/**
 * A person opens these links in a browser: a link that is not valid answers a 404 page, not the API's
 * JSON envelope.
 */
async function orNotFoundPage(http: Context, answer: () => Promise<string>): Promise<string> {
  http.type = 'html';
  try {
    return await answer();
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'RESOURCE_NOT_FOUND') throw err;
    http.state.responseStatus = 404;
    return page(
      'Link not valid',
      `<p>${escapeHtml(err.message)}. It may have been cut short by your mail program.</p>`,
    );
  }
}

/**
 * The pages of an unsubscribe link: no API token, the signed token is the proof. GET shows a page asking
 * to confirm (mail scanners open links); POST unsubscribes, from that page's form or as RFC 8058 one-click
 * (`List-Unsubscribe-Post`). `what` names what stops ("mail from us", "changelog notices").
 */
export function unsubscribePages(api: PluginApi, path: string, target: Unsubscribable, what: string): void {
  const done = (email: string) => page('Unsubscribed', `<p>${escapeHtml(email)} receives no more ${what}.</p>`);
  api
    .group({ prefix: path, tag: 'campaign', auth: 'none' })
    .get(
      '/',
      {
        summary: 'The page of an unsubscribe link: asks to confirm',
        query: tokenQuery,
        response: HTML_PAGE,
        answers: NOT_VALID_PAGE,
      },
      async ({ query, ctx: http }) =>
        orNotFoundPage(http, async () => {
          const { email, unsubscribed } = await target.describe(query.token);
          if (unsubscribed) return done(email);
          const action = `${path}?token=${encodeURIComponent(query.token)}`;
          return page(
            'Unsubscribe',
            `<p>Stop sending ${what} to ${escapeHtml(email)}?</p>` +
              `<form method="post" action="${escapeHtml(action)}"><button type="submit">Unsubscribe</button></form>`,
          );
        }),
    )
    .post(
      '/',
      {
        summary: 'Unsubscribe (the page form, or RFC 8058 one-click)',
        query: tokenQuery,
        response: HTML_PAGE,
        answers: NOT_VALID_PAGE,
      },
      async ({ query, ctx: http }) =>
        orNotFoundPage(http, async () => done((await target.unsubscribe(query.token)).email)),
    );
}
