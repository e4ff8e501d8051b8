import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { JobQueues, SERVICES, toInt } from '@switchboard/core';
import type { Logger } from '@switchboard/core';
import { CONFIRMATION_REQUEUE_AFTER_MS, queueConfirmations } from '../../shared/confirmation-job';

/** Rows the sweep reads at a time: more wait for its next minute. */
const SWEEP_BATCH = 1000;
/** A confirmation mail not sent within a day is given up: asked a day late, a reader would not expect it. */
const GIVE_UP_AFTER_MS = 24 * 3600_000;

/**
 * The confirmation mails whose queued jobs were lost (a process stopped before queueing one, Redis came
 * back empty, the embedded queue's memory went with its process): queued again from the rows recorded with
 * the subscribers. A job still waiting has the same id, so queueing it again changes nothing.
 */
@injectable()
export class ConfirmationSweep {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Queues) private readonly queues: JobQueues,
    @inject(SERVICES.Logger) private readonly logger: Logger,
  ) {}

  async run(now: Date): Promise<number> {
    const given = await this.knex('confirmation_mails_due')
      .where('created_at', '<', new Date(now.getTime() - GIVE_UP_AFTER_MS))
      .delete();
    if (given) this.logger.warn({ mails: given }, 'confirmation mails not sent within a day: given up');
    const due = await this.knex('confirmation_mails_due')
      .where('due_at', '<=', now)
      .orderBy('due_at')
      .limit(SWEEP_BATCH)
      .select('subscriber_id', 'organization_id');
    if (!due.length) return 0;
    await this.knex('confirmation_mails_due')
      .whereIn(
        'subscriber_id',
        due.map((r) => r.subscriber_id),
      )
      .update({ due_at: new Date(now.getTime() + CONFIRMATION_REQUEUE_AFTER_MS) });
    await queueConfirmations(
      this.queues,
      this.logger,
      due.map((row) => ({ organizationId: toInt(row.organization_id), subscriberId: toInt(row.subscriber_id) })),
    );
    return due.length;
  }
}
