import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, lockedOnMysql, parseJson, SERVICES, toDate, toInt, transactionWithRetry } from '@switchboard/core';
import type { Logger } from '@switchboard/core';
import { nextRunAt, Recurrence } from '../schedules';
import { latestListIds, SendStore } from './send-store';
import { SendService } from './send-service';

/**
 * A schedule's runs (docs/decisions.md, Sending): when next_run_at comes, the message is sent to the
 * schedule's lists (or those of its latest send), the run counted and the next one computed; the
 * schedule stops after max_runs. A run fires once however many processes tick: the update that takes it
 * is conditional on the next_run_at it saw.
 */
@injectable()
export class ScheduleRuns {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SendStore) private readonly store: SendStore,
    @inject(SendService) private readonly sends: SendService,
    @inject(SERVICES.Logger) private readonly logger: Logger,
  ) {}

  /** Fires the schedules due at `now`; a message still being sent (or paused) waits for its send to end. */
  async fireDue(now: Date): Promise<number> {
    const due = (await this.knex('message_schedules')
      .where({ is_active: true })
      .andWhere('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(100)
      .select(
        'id',
        'organization_id',
        'message_id',
        'frequency',
        'send_time',
        'timezone',
        'day_of_week',
        'max_runs',
        'run_count',
        'list_ids',
        'next_run_at',
      )) as Array<Record<string, unknown>>;
    let fired = 0;
    for (const schedule of due) {
      // One schedule that cannot fire (a time zone this server no longer knows, say) stops no other.
      try {
        if (await this.fire(schedule, now)) fired++;
      } catch (err) {
        this.logger.error({ err, scheduleId: schedule.id }, 'schedule run failed');
      }
    }
    return fired;
  }

  private async fire(schedule: Record<string, unknown>, now: Date): Promise<boolean> {
    const messageId = toInt(schedule.message_id);
    const listIds =
      parseJson<number[] | null>(schedule.list_ids, null) ?? (await latestListIds(this.knex, messageId)) ?? [];
    const runs = toInt(schedule.run_count) + 1;
    const maxRuns = schedule.max_runs === null ? null : toInt(schedule.max_runs);
    const last = maxRuns !== null && runs >= maxRuns;
    const next = last ? null : nextRunAt(schedule as unknown as Recurrence, now);
    const sendId = await transactionWithRetry(this.knex, async (trx) => {
      // The message's row first, locked (a POST /send locks it too), then whether a send of it runs: a
      // send started between a check outside and this transaction ran beside the run (review, session 26).
      await lockedOnMysql(trx('messages').where({ id: messageId }).first('id'));
      const busy = await trx('message_sends')
        .where({ message_id: messageId, test_mode: false })
        .whereIn('status', ['pending', 'active', 'paused'])
        .first('id');
      if (busy) return null;
      const taken = await trx('message_schedules')
        .where({ id: toInt(schedule.id), is_active: true, next_run_at: toDate(schedule.next_run_at) })
        .update({
          run_count: runs,
          last_run_at: now,
          next_run_at: next,
          is_active: !last,
          updated_at: this.clock.now(),
        });
      if (!taken) return null;
      const id = await this.store.create(trx, {
        organizationId: toInt(schedule.organization_id),
        messageId,
        status: 'active',
        listIds,
        testMode: false,
        scheduledAt: null,
        scheduleId: toInt(schedule.id),
      });
      await trx('messages').where({ id: messageId }).update({ status: 'active', updated_at: this.clock.now() });
      await this.store.addRecipients(trx, (await this.store.get(id, trx))!);
      return id;
    });
    if (sendId === null) return false;
    await this.sends.enqueue(sendId);
    return true;
  }
}
