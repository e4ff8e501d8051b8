import type { ApiGroup, PluginApi, PluginContext } from '@switchboard/core';
import { CHANGELOG_CONFIRM_PATH, CHANGELOG_UNSUBSCRIBE_PATH } from '../shared/paths';
import { escapeHtml } from '../shared/html';
import { linkPages, page } from '../shared/link-pages';
import { ChangelogConsent } from './consent';
import { unsubscribePages } from '../shared/unsubscribe-pages';
import { ChangelogUnsubscribe } from './unsubscribe';
import { ChangelogService } from './service';
import { changelogSubscribeBody, changelogSubscribedSchema } from './schemas';
import { envelopes, okSchema } from '../shared/envelope';

export function changelogRoutes(group: ApiGroup, ctx: PluginContext): void {
  const changelog = ctx.container.resolve(ChangelogService);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);
  group.post(
    '/changelog/subscribe',
    {
      summary: 'Subscribe to API change notices (201 when new, 200 when the pair was already subscribed)',
      permission: 'changelog:write',
      answers: { 200: 'the pair was already subscribed: the subscription as it is' },
      body: changelogSubscribeBody,
      trim: ['email', 'webhook_url'],
      response: { status: 201, schema: okSchema(changelogSubscribedSchema) },
    },
    async ({ auth, body, ctx: koa }) => {
      const { created, subscription } = await changelog.subscribe(auth.organizationId, body);
      if (!created) koa.state.responseStatus = 200;
      return envelope.ok(subscription);
    },
  );
}

/** The unsubscribe link of changelog notice mails, and the confirmation link of a new subscription. */
export function changelogUnsubscribeRoutes(api: PluginApi, ctx: PluginContext): void {
  unsubscribePages(api, CHANGELOG_UNSUBSCRIBE_PATH, ctx.container.resolve(ChangelogUnsubscribe), 'changelog notices');
  const consent = ctx.container.resolve(ChangelogConsent);
  const done = (email: string) =>
    page('Subscription confirmed', `<p>${escapeHtml(email)} will receive notices of API changes.</p>`);
  linkPages(
    api,
    CHANGELOG_CONFIRM_PATH,
    {
      show: 'The page of a changelog confirmation link: asks to confirm',
      act: 'Confirm a changelog subscription (the form of its page)',
    },
    {
      async show(token) {
        const { email, confirmed } = await consent.describe(token);
        return confirmed
          ? { page: done(email) }
          : { ask: `Send notices of API changes to ${escapeHtml(email)}?`, button: 'Confirm' };
      },
      act: async (token) => done((await consent.confirm(token)).email),
    },
  );
}
