import { ApiGroup, PluginContext } from '@switchboard/core';
import { InboundWebhooksService } from './service';
import { ProviderAdapters } from '../provider-adapters';
import { createInboundWebhookBody, inboundWebhookSchema, updateInboundWebhookBody } from './schemas';
import { envelopes } from '../../shared/envelope';
import { objectRoutes } from '@switchboard/core';

export function inboundWebhookRoutes(group: ApiGroup, ctx: PluginContext): void {
  const endpoints = ctx.container.resolve(InboundWebhooksService);
  const enabled = ctx.container.resolve(ProviderAdapters).keys();
  objectRoutes(group, {
    collection: '/inbound-webhooks',
    thing: 'Inbound webhook',
    resource: 'inbound-webhooks',
    schema: inboundWebhookSchema,
    envelope: envelopes(ctx.config.version, ctx.config.publicUrl),
    list: { summary: 'All inbound webhook endpoints', run: (org) => endpoints.all(org) },
    get: { summary: 'Get an inbound webhook endpoint', run: (org, id) => endpoints.get(org, id) },
    create: {
      summary: 'Create an inbound webhook endpoint (its secret, given or generated, is shown in this answer only)',
      body: createInboundWebhookBody(enabled),
      trim: ['name'],
      run: (org, body) => endpoints.create(org, body),
    },
    update: {
      summary: 'Update an inbound webhook endpoint (a new secret is shown in this answer only)',
      body: updateInboundWebhookBody,
      trim: ['name'],
      run: (org, id, body) => endpoints.update(org, id, body),
    },
    remove: { summary: 'Delete an inbound webhook endpoint', run: (org, id) => endpoints.delete(org, id) },
  });
}
