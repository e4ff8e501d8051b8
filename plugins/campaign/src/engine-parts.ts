// What the engine calls of the plugin: index.ts loads this file when an engine opens, not for the CLI's command list.
import { OutboundGuard, SERVICES } from '@switchboard/core';
import type { JobQueues, PluginApi, PluginContext, RecurringTask } from '@switchboard/core';
import { subscriberRoutes } from './audience/subscribers/routes';
import { batchRoutes } from './audience/batch/routes';
import { listRoutes } from './audience/lists/routes';
import { confirmRoutes } from './audience/double-opt-in/routes';
import { senderProfileRoutes } from './content/sender-profiles/routes';
import { messageRoutes } from './content/messages/routes';
import { messageDefaultsRoutes } from './content/message-defaults/routes';
import { scheduleRoutes } from './schedules/routes';
import { changelogRoutes, changelogUnsubscribeRoutes } from './changelog/routes';
import { changelogNoticesTask, processChangelogNotices } from './changelog/commands';
import { processConfirmationMails } from './audience/double-opt-in/jobs';
import { sendingRoutes } from './sending/routes';
import { unsubscribeRoutes } from './sending/unsubscribe-routes';
import { trackingRoutes } from './sending/tracking-routes';
import { processSendRanges, sendWatchdogTask } from './sending/jobs';
import { searchCompactionTask } from './audience/search/compaction-commands';
import { CAMPAIGN_API_PREFIX } from './shared/paths';
import { SENDING_OPTIONS, SendingOptions } from './sending/options';
import { inboundWebhookRoutes } from './events/inbound-webhooks/routes';
import { receiveRoutes } from './events/receive-routes';
import { remoteTextThrough, REMOTE_TEXT } from './events/remote-text';
import { processStatsRebuilds } from './events/stats-rebuild-commands';
import { messageStatsRoutes } from './events/message-stats';
import { analyticsRoutes } from './analytics/routes';
import { webhookRoutes } from './webhooks/routes';
import { processWebhookDeliveries, webhookDeliveriesTask } from './webhooks/commands';
import { DEFAULT_WEBHOOK_OPTIONS, WEBHOOK_OPTIONS, WebhookOptions } from './webhooks/options';
import { BUILT_IN_PROVIDERS, loadProviderAdapters, ProviderAdapters } from './events/provider-adapters';

export function register(ctx: PluginContext): void {
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
  searchCompactionTask(ctx),
  changelogNoticesTask(ctx),
  webhookDeliveriesTask(ctx),
];
