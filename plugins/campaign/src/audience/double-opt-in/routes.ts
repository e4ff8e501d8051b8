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
  // What the link leads to now: confirmed, or (unsubscribed, bounced since) nothing it can change.
  const done = ({ email, status }: { email: string; status: string }) =>
    status === 'active'
      ? page('Subscription confirmed', `<p>${escapeHtml(email)} is subscribed. Thank you.</p>`)
      : page('Nothing to confirm', `<p>${escapeHtml(email)} is not subscribed now; this link changes nothing.</p>`);
  linkPages(
    api,
    CONFIRM_PATH,
    {
      show: 'The page of a double opt-in link: asks to confirm',
      act: 'Confirm a subscription (the form of the double opt-in page)',
    },
    {
      async show(token) {
        const subscriber = await confirmations.describe(token);
        return subscriber.status === 'unconfirmed'
          ? { ask: `Subscribe ${escapeHtml(subscriber.email)}?`, button: 'Confirm' }
          : { page: done(subscriber) };
      },
      act: async (token) => done(await confirmations.confirm(token)),
    },
  );
}
