import type { Knex } from 'knex';
import { defineJob, JobQueues, queueEachSoon, type QueueLogger } from '@switchboard/core';

export interface ConfirmationJob {
  organizationId: number;
  subscriberId: number;
}

/** Double opt-in's mail (audience/double-opt-in sends it): queued by whatever creates an unconfirmed subscriber. */
export const CONFIRMATION_JOB = defineJob<ConfirmationJob>('campaign.confirmation-mail');

/** A queued confirmation job still waiting or retrying is left alone this long before the sweep queues it again. */
export const CONFIRMATION_REQUEUE_AFTER_MS = 2 * 60_000;

/**
 * Records, in the transaction that makes them, the unconfirmed subscribers whose confirmation mail is due:
 * what the sweep queues again should the job be lost (double-opt-in/confirmation-sweep.ts).
 */
export async function recordConfirmationsDue(
  trx: Knex.Transaction,
  organizationId: number,
  subscriberIds: number[],
  now: Date,
): Promise<void> {
  const due_at = new Date(now.getTime() + CONFIRMATION_REQUEUE_AFTER_MS);
  const rows = subscriberIds.map((subscriber_id) => ({
    subscriber_id,
    organization_id: organizationId,
    due_at,
    created_at: now,
  }));
  for (let i = 0; i < rows.length; i += 500) await trx('confirmation_mails_due').insert(rows.slice(i, i + 500));
}

/**
 * Queues the subscribers' confirmation mails; the job id makes a second request for the same subscriber a
 * no-op. A Redis that does not take one leaves it and the rest to the sweep (their rows are recorded), so
 * a request is never held by a Redis away (session 36).
 */
export async function queueConfirmations(queues: JobQueues, log: QueueLogger, mails: ConfirmationJob[]): Promise<void> {
  const queue = queues.get(CONFIRMATION_JOB);
  const add = (mail: ConfirmationJob) =>
    queue.add(mail, { jobId: `confirm-${mail.subscriberId}`, retries: 5, backoffMs: 5000 });
  await queueEachSoon(mails, add, log, 'confirmation mail');
}
