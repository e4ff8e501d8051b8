import { ApiGroup, idParams, PluginContext } from '@switchboard/core';
import { SenderProfilesService } from './service';
import { createSenderProfileBody, senderProfileSchema, updateSenderProfileBody } from './schemas';
import { envelopes, okSchema } from '../../shared/envelope';
import { deleteRoute } from '../../shared/delete-route';

export function senderProfileRoutes(group: ApiGroup, ctx: PluginContext): void {
  const profiles = ctx.container.resolve(SenderProfilesService);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);
  const permission = { read: 'sender-profiles:read', write: 'sender-profiles:write' };

  group
    .get(
      '/sender-profiles',
      {
        summary: 'All sender profiles',
        permission: permission.read,
        response: { schema: okSchema({ type: 'array', items: senderProfileSchema }) },
      },
      async ({ auth }) => envelope.ok(await profiles.all(auth.organizationId)),
    )
    .get(
      '/sender-profiles/:id',
      {
        summary: 'Get a sender profile',
        permission: permission.read,
        params: idParams,
        response: { schema: okSchema(senderProfileSchema) },
      },
      async ({ auth, params }) => envelope.ok(await profiles.get(auth.organizationId, params.id)),
    )
    .post(
      '/sender-profiles',
      {
        summary: 'Create a sender profile (is_default clears the previous default)',
        permission: permission.write,
        body: createSenderProfileBody,
        trim: ['from_email', 'reply_to_email'],
        response: { status: 201, schema: okSchema(senderProfileSchema) },
      },
      async ({ auth, body }) => envelope.ok(await profiles.create(auth.organizationId, body)),
    )
    .put(
      '/sender-profiles/:id',
      {
        summary: 'Update a sender profile',
        permission: permission.write,
        params: idParams,
        body: updateSenderProfileBody,
        trim: ['from_email', 'reply_to_email'],
        response: { schema: okSchema(senderProfileSchema) },
      },
      async ({ auth, params, body }) => envelope.ok(await profiles.update(auth.organizationId, params.id, body)),
    );
  deleteRoute(group, {
    path: '/sender-profiles/:id',
    thing: 'Sender profile',
    summary: 'Delete a sender profile',
    permission: permission.write,
    remove: (organizationId, id) => profiles.delete(organizationId, id),
  });
}
