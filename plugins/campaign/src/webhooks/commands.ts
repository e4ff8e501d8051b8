import type { Knex } from 'knex';
import type { JobQueues, PluginContext, RecurringTask } from '@switchboard/core';
import { SERVICES } from '@switchboard/core';
import { WebhookDispatcher } from './dispatcher';
import { WebhookWake } from './wake';
import { purgeFinishedDeliveries } from './purge';
import { WEBHOOK_DELIVERIES_JOB } from './jobs';
import { WEBHOOK_OPTIONS, WebhookOptions } from './options';

/** The delivery job: a worker delivers what is due. */
export function processWebhookDeliveries(queues: JobQueues, ctx: PluginContext): void {
  const dispatcher = ctx.container.resolve(WebhookDispatcher);
  queues.get(WEBHOOK_DELIVERIES_JOB).process(1, async () => {
    await dispatcher.run();
  });
}

/**
 * Every 15 seconds: wakes the delivery job while deliveries are due (retries; a queue that lost its
 * job with Redis), and deletes a batch of finished deliveries past the log's keeping time.
 */
export function webhookDeliveriesTask(ctx: PluginContext): RecurringTask {
  const dispatcher = ctx.container.resolve(WebhookDispatcher);
  const wake = ctx.container.resolve(WebhookWake);
  const options = ctx.container.resolve<WebhookOptions>(WEBHOOK_OPTIONS);
  const knex = ctx.container.resolve<Knex>(SERVICES.Knex);
  return {
    name: 'campaign.webhook-deliveries',
    cron: '*/15 * * * * *',
    run: async (now) => {
      if (await dispatcher.due()) wake.now();
      await purgeFinishedDeliveries(knex, new Date(now.getTime() - options.keepDays * 86_400_000));
    },
  };
}
