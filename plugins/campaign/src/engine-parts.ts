// What the engine calls of the plugin: index.ts loads this file when an engine opens, not for the CLI's command list.
import { OutboundGuard, SERVICES } from '@switchboard/core';
import type { JobQueues, PluginApi, PluginContext, RecurringTask } from '@switchboard/core';
import { subscriberRoutes } from './audience/subscribers';
import { batchRoutes } from './audience/batch';
import { listRoutes } from './audience/lists';
import { confirmRoutes } from './audience/double-opt-in';
import { senderProfileRoutes } from './content/sender-profiles';
import { messageRoutes } from './content/messages';
import { messageDefaultsRoutes } from './content/message-defaults';
import { scheduleRoutes } from './schedules';
import { changelogRoutes, changelogUnsubscribeRoutes } from './changelog';
import { changelogNoticesTask, processChangelogNotices } from './changelog';
import { confirmationSweepTask, processConfirmationMails } from './audience/double-opt-in';
import { sendingRoutes } from './sending';
import { unsubscribeRoutes } from './sending';
import { trackingRoutes } from './sending';
import { processSendRanges, sendWatchdogTask } from './sending';
import { searchCompactionTask } from './audience/search';
import { SEARCH_OPTIONS, SearchOptions, searchOptionsSchema } from './audience/search';
import { CAMPAIGN_API_PREFIX } from './shared/paths';
import { SENDING_OPTIONS, SendingOptions, sendingOptionsSchema } from './sending';
import { withDefaults } from './shared/plugin-options';
import { inboundWebhookRoutes } from './events';
import { receiveRoutes } from './events';
import { remoteTextThrough, REMOTE_TEXT } from './events';
import { processStatsRebuilds } from './events';
import { messageStatsRoutes } from './events';
import { analyticsRoutes } from './analytics';
import { webhookRoutes } from './webhooks';
import { processWebhookDeliveries, webhookDeliveriesTask } from './webhooks';
import { WEBHOOK_OPTIONS, WebhookOptions, webhookOptionsSchema } from './webhooks';
import { BUILT_IN_PROVIDERS, loadProviderAdapters, ProviderAdapters } from './events';
import { ADAPTER_DEADLINE_MS, DEFAULT_ADAPTER_DEADLINE_MS } from './events';

export function register(ctx: PluginContext): void {
  const { providers } = ctx.options as { providers?: Record<string, string> };
  ctx.container.register(ProviderAdapters, {
    useValue: loadProviderAdapters(providers ?? BUILT_IN_PROVIDERS, ctx.logger),
  });
  ctx.container.register(ADAPTER_DEADLINE_MS, { useValue: DEFAULT_ADAPTER_DEADLINE_MS });
  ctx.container.register(REMOTE_TEXT, {
    useFactory: (c) => remoteTextThrough(c.resolve<OutboundGuard>(SERVICES.OutboundGuard)),
  });
  const options = ctx.options as { sending?: SendingOptions; search?: SearchOptions; webhooks?: WebhookOptions };
  ctx.container.register(SENDING_OPTIONS, { useValue: withDefaults(sendingOptionsSchema, options.sending) });
  ctx.container.register(SEARCH_OPTIONS, { useValue: withDefaults(searchOptionsSchema, options.search) });
  ctx.container.register(WEBHOOK_OPTIONS, { useValue: withDefaults(webhookOptionsSchema, options.webhooks) });
}

export function routes(api: PluginApi, ctx: PluginContext): void {
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
}

export function jobs(queues: JobQueues, ctx: PluginContext): void {
  processConfirmationMails(queues, ctx);
  processSendRanges(queues, ctx);
  processStatsRebuilds(queues, ctx);
  processChangelogNotices(queues, ctx);
  processWebhookDeliveries(queues, ctx);
}

export const recurring = (ctx: PluginContext): RecurringTask[] => [
  sendWatchdogTask(ctx),
  confirmationSweepTask(ctx),
  searchCompactionTask(ctx),
  changelogNoticesTask(ctx),
  webhookDeliveriesTask(ctx),
];
