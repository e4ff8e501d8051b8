import { ApiGroup, idParams, PluginContext } from '@switchboard/core';
import { SubscriberQuery } from './query';
import { SubscriberWriter } from './writer';
import { ConfirmationMails } from '../double-opt-in/confirmation-mails';
import {
  createdSubscriberSchema,
  createSubscriberBody,
  listSubscribersQuery,
  subscriberListItemSchema,
  subscriberSchema,
  unsubscribeBody,
  updateSubscriberBody,
} from './schemas';
import { envelopes, okSchema, pageSchema } from '../../shared/envelope';
import { deleteRoute } from '../../shared/delete-route';

export function subscriberRoutes(group: ApiGroup, ctx: PluginContext): void {
  const query = ctx.container.resolve(SubscriberQuery);
  const writer = ctx.container.resolve(SubscriberWriter);
  const confirmations = ctx.container.resolve(ConfirmationMails);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);

  group
    .get(
      '/subscribers',
      {
        summary: 'List subscribers (filters and search operators)',
        permission: 'subscribers:read',
        query: listSubscribersQuery,
        response: { schema: pageSchema(subscriberListItemSchema) },
      },
      async ({ auth, query: q, ctx: koa }) => {
        const { items, total, capped } = await query.list(auth.organizationId, q);
        return envelope.page(
          koa,
          items,
          { total, per_page: q.per_page, current_page: q.page },
          capped ? { total_capped: true } : undefined,
        );
      },
    )
    .get(
      '/subscribers/:id',
      {
        summary: 'Get a subscriber with its lists and counters',
        permission: 'subscribers:read',
        params: idParams,
        response: { schema: okSchema(subscriberSchema) },
      },
      async ({ auth, params }) => envelope.ok(await query.get(auth.organizationId, params.id)),
    )
    .post(
      '/subscribers',
      {
        summary: 'Create a subscriber',
        permission: 'subscribers:write',
        body: createSubscriberBody,
        trim: ['email'],
        response: { status: 201, schema: okSchema(createdSubscriberSchema) },
      },
      async ({ auth, body }) => {
        const created = await writer.create(auth.organizationId, body);
        const confirmation_sent =
          created.status === 'unconfirmed' ? await confirmations.queue(auth.organizationId, created.id) : false;
        return envelope.ok({ ...created, confirmation_sent });
      },
    )
    .put(
      '/subscribers/:id',
      {
        summary: 'Update a subscriber (lists and meta_data are replaced when given)',
        permission: 'subscribers:write',
        params: idParams,
        body: updateSubscriberBody,
        response: { schema: okSchema(subscriberSchema) },
      },
      async ({ auth, params, body }) => {
        await writer.update(auth.organizationId, params.id, body);
        return envelope.ok(await query.get(auth.organizationId, params.id));
      },
    );

  deleteRoute(group, {
    path: '/subscribers/:id',
    thing: 'Subscriber',
    summary: 'Delete a subscriber',
    permission: 'subscribers:write',
    remove: (organizationId, id) => writer.delete(organizationId, id),
  }).post(
    '/subscribers/:id/unsubscribe',
    {
      summary: 'Unsubscribe (reason and feedback are kept)',
      permission: 'subscribers:write',
      params: idParams,
      body: unsubscribeBody,
      response: { schema: okSchema(subscriberSchema) },
    },
    async ({ auth, params, body }) => {
      await writer.setStatus(auth.organizationId, params.id, 'unsubscribed', {
        unsubscribe_reason: body.reason ?? null,
        unsubscribe_feedback: body.feedback ?? null,
      });
      return envelope.ok(await query.get(auth.organizationId, params.id));
    },
  );
}
