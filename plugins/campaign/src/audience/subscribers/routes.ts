import { ApiGroup, idParams, JobQueues, PluginContext, SERVICES } from '@switchboard/core';
import { SubscriberQuery } from './query';
import { SubscriberWriter } from './writer';
import { queueConfirmations } from '../../shared/confirmation-job';
import {
  createdSubscriberSchema,
  createSubscriberBody,
  listSubscribersQuery,
  subscriberListItemSchema,
  subscriberSchema,
  unsubscribeBody,
  updateSubscriberBody,
} from './schemas';
import { envelopes, okSchema } from '../../shared/envelope';
import { objectRoutes } from '@switchboard/core';

export function subscriberRoutes(group: ApiGroup, ctx: PluginContext): void {
  const query = ctx.container.resolve(SubscriberQuery);
  const writer = ctx.container.resolve(SubscriberWriter);
  const queues = ctx.container.resolve<JobQueues>(SERVICES.Queues);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);

  objectRoutes(group, {
    collection: '/subscribers',
    thing: 'Subscriber',
    resource: 'subscribers',
    schema: subscriberSchema,
    envelope,
    page: {
      summary: 'List subscribers (filters and search operators)',
      answers: {
        422:
          'VALIDATION_ERROR, also when list_id is not a list of the organization (rule exists), when search names ' +
          'an unknown operator, gives one twice with two values or a value it cannot take (search, rule ' +
          'operator), leaves a double quote unmatched (search, rule syntax) or has more than 16 terms (search, ' +
          'rule max_terms), or when a search ' +
          'with substrings asks for a page past the matches its capped total counts (page, rule maximum), or ' +
          'stops on its bounds before finding a match of the page asked for (search, rule too_broad)',
      },
      query: listSubscribersQuery,
      item: subscriberListItemSchema,
      run: (org, q) => query.list(org, q),
    },
    get: { summary: 'Get a subscriber with its lists and counters', run: (org, id) => query.get(org, id) },
    update: {
      summary: 'Update a subscriber (lists and meta_data are replaced when given)',
      answers: {
        409: 'DUPLICATE_ENTRY: another subscriber has this email',
        422: 'VALIDATION_ERROR, also when a list id is not of the organization (rule exists)',
      },
      body: updateSubscriberBody,
      run: async (org, id, body) => {
        await writer.update(org, id, body);
        return query.get(org, id);
      },
    },
    remove: { summary: 'Delete a subscriber', run: (org, id) => writer.delete(org, id) },
  })
    .post(
      '/subscribers',
      {
        summary: 'Create a subscriber',
        answers: {
          409: 'DUPLICATE_ENTRY: a subscriber with this email exists',
          422: 'VALIDATION_ERROR, also when a list id is not of the organization (rule exists)',
        },
        permission: 'subscribers:write',
        body: createSubscriberBody,
        trim: ['email'],
        response: { status: 201, schema: okSchema(createdSubscriberSchema) },
      },
      async ({ auth, body }) => {
        const created = await writer.create(auth.organizationId, body);
        // On its way: queued, or recorded for the sweep while Redis does not take it.
        const confirmation_sent = created.status === 'unconfirmed';
        if (confirmation_sent)
          await queueConfirmations(queues, ctx.logger, [
            { organizationId: auth.organizationId, subscriberId: created.id },
          ]);
        return envelope.ok({ ...created, confirmation_sent });
      },
    )
    .post(
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
