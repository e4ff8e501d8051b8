import { ApiGroup, idParams, PluginContext } from '@switchboard/core';
import { MessagesService } from './service';
import { createMessageBody, listMessagesQuery, messageSchema, updateMessageBody } from './schemas';
import { envelopes, okSchema, pageSchema } from '../../shared/envelope';
import { deleteRoute } from '../../shared/delete-route';

export function messageRoutes(group: ApiGroup, ctx: PluginContext): void {
  const messages = ctx.container.resolve(MessagesService);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);

  group
    .get(
      '/messages',
      {
        summary: 'List messages (status, created between from_date and to_date)',
        permission: 'messages:read',
        query: listMessagesQuery,
        response: { schema: pageSchema(messageSchema) },
      },
      async ({ auth, query, ctx: koa }) => {
        const { items, total } = await messages.list(auth.organizationId, query);
        return envelope.page(koa, items, { total, per_page: query.per_page, current_page: query.page });
      },
    )
    .get(
      '/messages/:id',
      {
        summary: 'Get a message with stats, open_rate and click_rate',
        permission: 'messages:read',
        params: idParams,
        response: { schema: okSchema(messageSchema) },
      },
      async ({ auth, params }) => envelope.ok(await messages.get(auth.organizationId, params.id)),
    )
    .post(
      '/messages',
      {
        summary: 'Create a message (a draft)',
        permission: 'messages:write',
        body: createMessageBody,
        trim: ['from_email'],
        response: { status: 201, schema: okSchema(messageSchema) },
      },
      async ({ auth, body }) => envelope.ok(await messages.create(auth.organizationId, body)),
    )
    .put(
      '/messages/:id',
      {
        summary: 'Update a message (only while it is a draft)',
        permission: 'messages:write',
        params: idParams,
        body: updateMessageBody,
        trim: ['from_email'],
        response: { schema: okSchema(messageSchema) },
      },
      async ({ auth, params, body }) => envelope.ok(await messages.update(auth.organizationId, params.id, body)),
    );
  deleteRoute(group, {
    path: '/messages/:id',
    thing: 'Message',
    summary: 'Delete a message (not while it is being sent)',
    permission: 'messages:write',
    remove: (organizationId, id) => messages.delete(organizationId, id),
  });
}
