import { ApiGroup, PluginContext } from '@switchboard/core';
import { envelopes, okSchema } from '../../shared/envelope';
import { MessageDefaultsService } from './service';
import { messageDefaultsSchema, updateMessageDefaultsBody } from './schemas';

export function messageDefaultsRoutes(group: ApiGroup, ctx: PluginContext): void {
  const defaults = ctx.container.resolve(MessageDefaultsService);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);
  const response = { schema: okSchema(messageDefaultsSchema) };

  group
    .get(
      '/message-defaults',
      { summary: "The organization's defaults for new messages (tracking)", permission: 'messages:read', response },
      async ({ auth }) => envelope.ok(await defaults.get(auth.organizationId)),
    )
    .put(
      '/message-defaults',
      {
        summary: "Change the organization's defaults for new messages; existing messages keep theirs",
        permission: 'messages:write',
        body: updateMessageDefaultsBody,
        response,
      },
      async ({ auth, body }) => envelope.ok(await defaults.update(auth.organizationId, body)),
    );
}
