import path from 'node:path';
import { definePlugin, OutboundGuard, SERVICES } from '@switchboard/core';
import { subscriberRoutes } from './audience/subscribers/routes';
import { batchRoutes } from './audience/batch/routes';
import { listRoutes } from './audience/lists/routes';
import { confirmRoutes } from './audience/double-opt-in/routes';
import { senderProfileRoutes } from './content/sender-profiles/routes';
import { messageRoutes } from './content/messages/routes';
import { messageDefaultsRoutes } from './content/message-defaults/routes';
import { scheduleRoutes } from './schedules/routes';
import { changelogRoutes, changelogUnsubscribeRoutes } from './changelog/routes';
import { changelogCommands, changelogNoticesTask, processChangelogNotices } from './changelog/commands';
import { processConfirmationMails } from './audience/double-opt-in/jobs';
import { sendingRoutes } from './sending/routes';
import { unsubscribeRoutes } from './sending/unsubscribe-routes';
import { trackingRoutes } from './sending/tracking-routes';
import { processSendRanges, sendWatchdogTask } from './sending/jobs';
import { searchCompactionCommands, searchCompactionTask } from './audience/search/compaction-commands';
import { CAMPAIGN_API_PREFIX } from './shared/paths';
import { SENDING_OPTIONS, SendingOptions, sendingOptionsSchema } from './sending/options';
import { inboundWebhookRoutes } from './events/inbound-webhooks/routes';
import { receiveRoutes } from './events/receive-routes';
import { remoteTextThrough, REMOTE_TEXT } from './events/remote-text';
import { processStatsRebuilds, statsRebuildCommands } from './events/stats-rebuild-commands';
import { messageStatsRoutes } from './events/message-stats';
import { analyticsRoutes } from './analytics/routes';
import { analyticsCommands } from './analytics/commands';
import { webhookRoutes } from './webhooks/routes';
import { processWebhookDeliveries, webhookDeliveriesTask } from './webhooks/commands';
import { DEFAULT_WEBHOOK_OPTIONS, WEBHOOK_OPTIONS, WebhookOptions, webhookOptionsSchema } from './webhooks/options';
import {
  BUILT_IN_PROVIDERS,
  loadProviderAdapters,
  ProviderAdapters,
  providersOptionsSchema,
} from './events/provider-adapters';

const pkg = require('../../package.json') as { version: string };

export default definePlugin({
  id: 'campaign',
  version: pkg.version,
  migrationsDir: path.join(__dirname, '../migrations'),
  resources: [
    'subscribers',
    'lists',
    'messages',
    'schedules',
    'sender-profiles',
    'analytics',
    'webhooks',
    'inbound-webhooks',
    'changelog',
  ],
  optionsSchema: {
    type: 'object',
    additionalProperties: false,
    properties: { sending: sendingOptionsSchema, providers: providersOptionsSchema, webhooks: webhookOptionsSchema },
  },
  register(ctx) {
    const { providers } = ctx.options as { providers?: Record<string, string> };
    ctx.container.register(ProviderAdapters, { useValue: loadProviderAdapters(providers ?? BUILT_IN_PROVIDERS) });
    ctx.container.register(REMOTE_TEXT, {
      useFactory: (c) => remoteTextThrough(c.resolve<OutboundGuard>(SERVICES.OutboundGuard)),
    });
    ctx.container.register(SENDING_OPTIONS, {
      useValue: (ctx.options as { sending?: SendingOptions }).sending ?? {
        pauseFailureRate: 0.5,
        pauseMinimumTried: 100,
      },
    });
    ctx.container.register(WEBHOOK_OPTIONS, {
      useValue: { ...DEFAULT_WEBHOOK_OPTIONS, ...(ctx.options as { webhooks?: Partial<WebhookOptions> }).webhooks },
    });
  },
  rateLimits: { windowSeconds: 3600, perToken: { overall: 1000, GET: 500, POST: 100, DELETE: 50 }, perAddress: 100 },
  routes(api, ctx) {
    const group = api.group({ prefix: CAMPAIGN_API_PREFIX, tag: 'campaign', auth: 'token' });
    // In this order: /subscribers/batch before /subscribers/:id, and the OpenAPI document lists them so.
    batchRoutes(group, ctx);
    subscriberRoutes(group, ctx);
    listRoutes(group, ctx);
    senderProfileRoutes(group, ctx);
    messageRoutes(group, ctx);
    messageDefaultsRoutes(group, ctx);
    messageStatsRoutes(group, ctx);
    sendingRoutes(group, ctx);
    scheduleRoutes(group, ctx);
    changelogRoutes(group, ctx);
    analyticsRoutes(group, ctx);
    webhookRoutes(group, ctx);
    inboundWebhookRoutes(group, ctx);
    confirmRoutes(api, ctx);
    unsubscribeRoutes(api, ctx);
    changelogUnsubscribeRoutes(api, ctx);
    trackingRoutes(api, ctx);
    receiveRoutes(api, ctx);
  },
  jobs(queues, ctx) {
    processConfirmationMails(queues, ctx);
    processSendRanges(queues, ctx);
    processStatsRebuilds(queues, ctx);
    processChangelogNotices(queues, ctx);
    processWebhookDeliveries(queues, ctx);
  },
  recurring: (ctx) => [
    sendWatchdogTask(ctx),
    searchCompactionTask(ctx),
    changelogNoticesTask(ctx),
    webhookDeliveriesTask(ctx),
  ],
  commands(program, context) {
    searchCompactionCommands(program, context);
    statsRebuildCommands(program, context);
    analyticsCommands(program, context);
    changelogCommands(program, context);
  },
});
