import type { PluginApi, PluginContext } from '@switchboard/core';
import { ConfirmationMails } from './confirmation-mails';
import { escapeHtml } from '../../shared/html';
import { linkPages, page } from '../../shared/link-pages';
import { CONFIRM_PATH } from '../../shared/paths';

/**
 * The double opt-in link a subscriber opens: no API token, the signed token is the proof. GET shows a page
 * asking to confirm (mail scanners open links, and must not confirm for the reader); its form's POST confirms.
 */
export function confirmRoutes(api: PluginApi, ctx: PluginContext): void {
  const confirmations = ctx.container.resolve(ConfirmationMails);
  const done = (email: string) =>
    page('Subscription confirmed', `<p>${escapeHtml(email)} is subscribed. Thank you.</p>`);
  linkPages(
    api,
    CONFIRM_PATH,
    {
      show: 'The page of a double opt-in link: asks to confirm',
      act: 'Confirm a subscription (the form of the double opt-in page)',
    },
    {
      async show(token) {
        const { email, confirmed } = await confirmations.describe(token);
        return confirmed ? { page: done(email) } : { ask: `Subscribe ${escapeHtml(email)}?`, button: 'Confirm' };
      },
      act: async (token) => done((await confirmations.confirm(token)).email),
    },
  );
}
