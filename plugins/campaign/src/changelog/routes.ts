import type { ApiGroup, PluginApi, PluginContext } from '@switchboard/core';
import { CHANGELOG_UNSUBSCRIBE_PATH } from '../shared/paths';
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

/** The unsubscribe link of changelog notice mails. */
export function changelogUnsubscribeRoutes(api: PluginApi, ctx: PluginContext): void {
  unsubscribePages(api, CHANGELOG_UNSUBSCRIBE_PATH, ctx.container.resolve(ChangelogUnsubscribe), 'changelog notices');
}
