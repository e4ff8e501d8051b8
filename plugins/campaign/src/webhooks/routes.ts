import { ApiGroup, idParams, PluginContext } from '@switchboard/core';
import { envelopes, okSchema, pageSchema } from '../shared/envelope';
import { objectRoutes } from '@switchboard/core';
import { WebhooksService } from './service';
import { WebhookDeliveries } from './deliveries';
import {
  createWebhookBody,
  deliveryQuery,
  deliverySchema,
  testDeliverySchema,
  updateWebhookBody,
  webhookSchema,
} from './schemas';

/** The 422 rules of a subscribe or update that no schema states. */
const RULES_NO_SCHEMA_STATES =
  'VALIDATION_ERROR, also: a url that carries credentials or is a literal private, loopback or reserved address (url/url; a host name is checked when a delivery connects); a secret that gives a key under 16 bytes (secret/minLength)';

export function webhookRoutes(group: ApiGroup, ctx: PluginContext): void {
  const webhooks = ctx.container.resolve(WebhooksService);
  const deliveries = ctx.container.resolve(WebhookDeliveries);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);
  objectRoutes(group, {
    collection: '/webhooks',
    thing: 'Webhook',
    resource: 'webhooks',
    schema: webhookSchema,
    envelope,
    list: { summary: 'All outbound webhook subscriptions', run: (org) => webhooks.all(org) },
    get: { summary: 'Get an outbound webhook subscription', run: (org, id) => webhooks.get(org, id) },
    create: {
      summary: 'Subscribe a receiver to events (its secret, given or generated, is shown in this answer only)',
      answers: {
        422: RULES_NO_SCHEMA_STATES,
      },
      body: createWebhookBody,
      trim: ['name', 'url'],
      run: (org, body) => webhooks.create(org, body),
    },
    update: {
      summary: 'Update a subscription (a new secret is shown in this answer only; active: true activates it again)',
      answers: {
        422: RULES_NO_SCHEMA_STATES,
      },
      body: updateWebhookBody,
      trim: ['name', 'url'],
      run: (org, id, body) => webhooks.update(org, id, body),
    },
    remove: { summary: 'Delete a subscription and its delivery log', run: (org, id) => webhooks.delete(org, id) },
  })
    .get(
      '/webhooks/:id/deliveries',
      {
        summary: "A subscription's delivery log, newest first (state, tries, the receiver's status, latency)",
        permission: 'webhooks:read',
        params: idParams,
        query: deliveryQuery,
        response: { schema: pageSchema(deliverySchema) },
      },
      async ({ auth, params, query, ctx: http }) => {
        const { items, total } = await deliveries.log(auth.organizationId, params.id, query);
        return envelope.page(http, items, { total, per_page: query.per_page, current_page: query.page });
      },
    )
    .post(
      '/webhooks/:id/test',
      {
        summary: 'Send a signed test event (webhook.test) now and answer what the receiver answered',
        permission: 'webhooks:write',
        params: idParams,
        response: { schema: okSchema(testDeliverySchema) },
      },
      async ({ auth, params }) => envelope.ok(await deliveries.test(auth.organizationId, params.id)),
    );
}
