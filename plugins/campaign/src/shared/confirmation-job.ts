import { defineJob, JobQueues } from '@switchboard/core';

export interface ConfirmationJob {
  organizationId: number;
  subscriberId: number;
}

/** Double opt-in's mail (audience/double-opt-in sends it): queued by whatever creates an unconfirmed subscriber. */
export const CONFIRMATION_JOB = defineJob<ConfirmationJob>('campaign.confirmation-mail');

/** Queues a subscriber's confirmation mail; the job id makes a second request for the same subscriber a no-op. */
export async function queueConfirmation(
  queues: JobQueues,
  organizationId: number,
  subscriberId: number,
): Promise<boolean> {
  await queues
    .get(CONFIRMATION_JOB)
    .add({ organizationId, subscriberId }, { jobId: `confirm-${subscriberId}`, retries: 5, backoffMs: 5000 });
  return true;
}
