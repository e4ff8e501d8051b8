import type { PluginApi } from '@switchboard/core';
import { escapeHtml } from './html';
import { linkPages, page } from './link-pages';

/** What an unsubscribe link points at: a campaign subscriber, a changelog subscription. */
export interface Unsubscribable {
  /** `test`: the link of a test mail, which unsubscribes nobody. */
  describe(token: string): Promise<{ email: string; unsubscribed: boolean; test?: boolean }>;
  unsubscribe(token: string): Promise<{ email: string; test?: boolean }>;
}

/** What a test mail's link says, rather than "not valid": it works, and unsubscribes nobody. */
const TEST_PAGE = page(
  'A test mail',
  '<p>This link is in a test mail: it unsubscribes nobody. In the mail as sent, it unsubscribes its reader.</p>',
);

/**
 * The pages of an unsubscribe link: no API token, the signed token is the proof. GET shows a page asking
 * to confirm (mail scanners open links); POST unsubscribes, from that page's form or as RFC 8058 one-click
 * (`List-Unsubscribe-Post`). `what` names what stops ("mail from us", "changelog notices").
 */
export function unsubscribePages(api: PluginApi, path: string, target: Unsubscribable, what: string): void {
  const done = (email: string) => page('Unsubscribed', `<p>${escapeHtml(email)} receives no more ${what}.</p>`);
  linkPages(
    api,
    path,
    {
      show: 'The page of an unsubscribe link: asks to confirm',
      act: 'Unsubscribe (the page form, or RFC 8058 one-click)',
    },
    {
      async show(token) {
        const { email, unsubscribed, test } = await target.describe(token);
        if (test) return { page: TEST_PAGE };
        if (unsubscribed) return { page: done(email) };
        return { ask: `Stop sending ${what} to ${escapeHtml(email)}?`, button: 'Unsubscribe' };
      },
      async act(token) {
        const { email, test } = await target.unsubscribe(token);
        return test ? TEST_PAGE : done(email);
      },
    },
  );
}
