import { ApiGroup, PluginContext } from '@switchboard/core';
import { SenderProfilesService } from './service';
import { createSenderProfileBody, senderProfileSchema, updateSenderProfileBody } from './schemas';
import { envelopes } from '../../shared/envelope';
import { objectRoutes } from '@switchboard/core';

export function senderProfileRoutes(group: ApiGroup, ctx: PluginContext): void {
  const profiles = ctx.container.resolve(SenderProfilesService);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);

  objectRoutes(group, {
    collection: '/sender-profiles',
    thing: 'Sender profile',
    resource: 'sender-profiles',
    schema: senderProfileSchema,
    envelope,
    list: { summary: 'All sender profiles', run: (org) => profiles.all(org) },
    get: { summary: 'Get a sender profile', run: (org, id) => profiles.get(org, id) },
    create: {
      summary: 'Create a sender profile (is_default clears the previous default)',
      body: createSenderProfileBody,
      trim: ['from_email', 'reply_to_email'],
      run: (org, body) => profiles.create(org, body),
    },
    update: {
      summary: 'Update a sender profile',
      body: updateSenderProfileBody,
      trim: ['from_email', 'reply_to_email'],
      run: (org, id, body) => profiles.update(org, id, body),
    },
    remove: { summary: 'Delete a sender profile', run: (org, id) => profiles.delete(org, id) },
  });
}
