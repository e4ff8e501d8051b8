import type { JobQueues, PluginContext, RecurringTask } from '@switchboard/core';
import { CONFIRMATION_JOB } from '../../shared/confirmation-job';
import { ConfirmationMails } from './confirmation-mails';
import { ConfirmationSweep } from './confirmation-sweep';

export function processConfirmationMails(queues: JobQueues, ctx: PluginContext): void {
  const confirmations = ctx.container.resolve(ConfirmationMails);
  queues.get(CONFIRMATION_JOB).process(4, (job) => confirmations.send(job.data));
}

/** Every minute: confirmation mails whose jobs were lost are queued again. */
export function confirmationSweepTask(ctx: PluginContext): RecurringTask {
  const sweep = ctx.container.resolve(ConfirmationSweep);
  return {
    name: 'campaign.confirmation-sweep',
    cron: '0 * * * * *',
    run: async (now) => {
      await sweep.run(now);
    },
  };
}
