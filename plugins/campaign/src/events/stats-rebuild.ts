import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { defineJob, notFound, SERVICES, toInt, transactionWithRetry } from '@switchboard/core';
import { addToTimelines, COUNTERS, replayCounted } from '../mail-events';

export const STATS_REBUILD_JOB = defineJob<{ organizationId: number; messageId: number }>('campaign.stats-rebuild');

const TIMELINE_CHUNK = 5000;

/**
 * Recomputes a message's statistics from the records (campaign spec §6) by replaying what the mail-event
 * ledger counted: sent from its real sends' sent recipients, opened and clicked from its mails' first
 * open and click marks (what tracking and provider events both set), delivered, bounced, complained and
 * unsubscribed from its event records that found their subscriber (our own unsubscribe links are recorded
 * too); the hourly and daily timelines from every event record of the message.
 */
@injectable()
export class StatsRebuild {
  constructor(@inject(SERVICES.Knex) private readonly knex: Knex) {}

  async run(orgId: number, messageId: number): Promise<Record<string, number>> {
    return transactionWithRetry(this.knex, async (trx) => {
      const message = await trx('messages').where({ organization_id: orgId, id: messageId }).forUpdate().first('id');
      if (!message) throw notFound('Message', messageId);
      const counters: Record<string, number> = Object.fromEntries(Object.values(COUNTERS).map((c) => [c!.message, 0]));
      await replayCounted(trx, { organizationId: orgId, messageId }, (e) => counters[COUNTERS[e.type]!.message]++);
      await trx('messages').where({ id: messageId }).update(counters);
      await trx('message_event_rollups').where({ message_id: messageId }).delete();
      for (let after = 0; ;) {
        const events = await trx('inbound_events')
          .where({ message_id: messageId, organization_id: orgId })
          .andWhere('id', '>', after)
          .orderBy('id')
          .limit(TIMELINE_CHUNK)
          .select('id', 'message_id', 'event_type', 'event_at');
        if (!events.length) break;
        await addToTimelines(trx, events);
        after = toInt(events[events.length - 1].id);
      }
      return counters;
    });
  }
}
