import { ApiGroup, PluginContext } from '@switchboard/core';
import { MessagesService } from './service';
import { createMessageBody, listMessagesQuery, messageSchema, updateMessageBody } from './schemas';
import { envelopes } from '../../shared/envelope';
import { objectRoutes } from '@switchboard/core';

export function messageRoutes(group: ApiGroup, ctx: PluginContext): void {
  const messages = ctx.container.resolve(MessagesService);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);

  objectRoutes(group, {
    collection: '/messages',
    thing: 'Message',
    resource: 'messages',
    schema: messageSchema,
    envelope,
    page: {
      summary: 'List messages (status, created between from_date and to_date)',
      query: listMessagesQuery,
      answers: { 422: 'VALIDATION_ERROR, also when to_date is before from_date (to_date/after_from_date)' },
      run: (org, query) => messages.list(org, query),
    },
    get: { summary: 'Get a message with stats, open_rate and click_rate', run: (org, id) => messages.get(org, id) },
    create: {
      summary: 'Create a message (a draft)',
      body: createMessageBody,
      trim: ['from_email'],
      run: (org, body) => messages.create(org, body),
    },
    update: {
      summary: 'Update a message (only while it is a draft)',
      body: updateMessageBody,
      answers: { 422: 'VALIDATION_ERROR, also when the message is no longer a draft (status/draft_only)' },
      trim: ['from_email'],
      run: (org, id, body) => messages.update(org, id, body),
    },
    remove: { summary: 'Delete a message (not while it is being sent)', run: (org, id) => messages.delete(org, id) },
  });
}
