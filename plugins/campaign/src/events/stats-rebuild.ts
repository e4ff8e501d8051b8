import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { defineJob, notFound, SERVICES, transactionWithRetry } from '@switchboard/core';
import { COUNTERS, FIRSTS, messageCounterOf, replayCounted, TimelineCounts } from '../mail-events';

export const STATS_REBUILD_JOB = defineJob<{ organizationId: number; messageId: number }>('campaign.stats-rebuild');

/**
 * Recomputes a message's statistics from the records (campaign spec §6) by replaying what the mail-event
 * ledger counted: sent from its real sends' sent recipients; every open and click from their engagement
 * records (tracked ones and providers'), the unique figures from its mails' first open and click marks;
 * delivered, bounced, complained and unsubscribed from its event records that found their subscriber (our
 * own unsubscribe links are recorded too); the hourly and daily timelines from the same events, when they
 * occurred.
 */
@injectable()
export class StatsRebuild {
  constructor(@inject(SERVICES.Knex) private readonly knex: Knex) {}

  async run(orgId: number, messageId: number): Promise<Record<string, number>> {
    return transactionWithRetry(this.knex, async (trx) => {
      const message = await trx('messages').where({ organization_id: orgId, id: messageId }).forUpdate().first('id');
      if (!message) throw notFound('Message', messageId);
      const counters: Record<string, number> = Object.fromEntries(
        [...Object.values(COUNTERS), ...Object.values(FIRSTS)].map((c) => [c!.message, 0]),
      );
      const timeline = new TimelineCounts();
      await trx('message_event_rollups').where({ message_id: messageId }).delete();
      await replayCounted(trx, { organizationId: orgId, messageId }, (e) => {
        counters[messageCounterOf(e)]++;
        if (e.kind === 'event') timeline.add(messageId, e.type, e.occurredAt);
      });
      await timeline.save(trx);
      await trx('messages').where({ id: messageId }).update(counters);
      return counters;
    });
  }
}
