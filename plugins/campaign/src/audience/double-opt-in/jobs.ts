import type { JobQueues, PluginContext } from '@switchboard/core';
import { CONFIRMATION_JOB } from '../../shared/confirmation-job';
import { ConfirmationMails } from './confirmation-mails';

export function processConfirmationMails(queues: JobQueues, ctx: PluginContext): void {
  const confirmations = ctx.container.resolve(ConfirmationMails);
  queues.get(CONFIRMATION_JOB).process(4, (job) => confirmations.send(job.data));
}
