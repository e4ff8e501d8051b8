import type { Context } from 'koa';
import { AppError, PluginApi } from '@switchboard/core';
import { escapeHtml } from './html';

/** The HTML pages of the links people open from mail (unsubscribe, confirm): a signed token is the proof. */
const tokenQuery = {
  type: 'object',
  required: ['token'],
  properties: { token: { type: 'string', minLength: 3, maxLength: 200 } },
} as const;

export const page = (title: string, body: string) =>
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

/** What a link's pages need: on GET, what the page says; on POST, the page once it has acted. */
export interface LinkAction {
  /** The page of GET: `ask` (a question, with a button that POSTs to the link) or another page as it is. */
  show(token: string): Promise<{ ask: string; button: string } | { page: string }>;
  /** Acts (once: a second POST acts no more) and gives the page that says it is done. */
  act(token: string): Promise<string>;
}

/**
 * The pages of a signed link a person opens from mail: GET only shows a page (mail scanners and previews
 * open links), whose form POSTs to the same link to act. A link that is not valid answers a 404 page.
 * Only refused requests count against the rate limit: a valid token is its own proof.
 */
export function linkPages(
  api: PluginApi,
  path: string,
  summaries: { show: string; act: string },
  action: LinkAction,
): void {
  api
    .group({ prefix: path, tag: 'campaign', auth: 'none', rateLimitCounts: 'refusals' })
    .get(
      '/',
      { summary: summaries.show, query: tokenQuery, response: HTML_PAGE, answers: NOT_VALID_PAGE },
      async ({ query, ctx: http }) =>
        orNotFoundPage(http, async () => {
          const shown = await action.show(query.token);
          if ('page' in shown) return shown.page;
          const target = `${path}?token=${encodeURIComponent(query.token)}`;
          return page(
            shown.button,
            `<p>${shown.ask}</p>` +
              `<form method="post" action="${escapeHtml(target)}"><button type="submit">${shown.button}</button></form>`,
          );
        }),
    )
    .post(
      '/',
      { summary: summaries.act, query: tokenQuery, response: HTML_PAGE, answers: NOT_VALID_PAGE },
      async ({ query, ctx: http }) => orNotFoundPage(http, () => action.act(query.token)),
    );
}
