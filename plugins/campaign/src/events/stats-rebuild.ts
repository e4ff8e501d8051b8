import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { defineJob, notFound, SERVICES, toInt, transactionWithRetry } from '@switchboard/core';
import { addToTimelines } from './timelines';

export const STATS_REBUILD_JOB = defineJob<{ organizationId: number; messageId: number }>('campaign.stats-rebuild');

const FROM_EVENTS: Record<string, string> = {
  count_delivered: 'delivered',
  count_bounced: 'bounced',
  count_complained: 'complained',
  count_stop: 'unsubscribed',
};
const TIMELINE_CHUNK = 5000;

/**
 * Recomputes a message's statistics from the records (campaign spec §6): delivered, bounced, complained
 * and unsubscribed from its event records that found their subscriber (our own unsubscribe links are
 * recorded too), opened and clicked from its recipients' first open and click (what tracking and provider
 * events both mark), and the hourly and daily timelines from every event record of the message.
 */
@injectable()
export class StatsRebuild {
  constructor(@inject(SERVICES.Knex) private readonly knex: Knex) {}

  async run(orgId: number, messageId: number): Promise<Record<string, number>> {
    return transactionWithRetry(this.knex, async (trx) => {
      const message = await trx('messages').where({ organization_id: orgId, id: messageId }).forUpdate().first('id');
      if (!message) throw notFound('Message', messageId);
      const counters: Record<string, number> = {};
      const byType = await trx('inbound_events')
        .where({ message_id: messageId, organization_id: orgId })
        .whereNotNull('subscriber_id')
        .groupBy('event_type')
        .select('event_type', trx.raw('count(*) as n'));
      const counted = new Map(byType.map((r: { event_type: string; n: unknown }) => [r.event_type, toInt(r.n)]));
      for (const [column, type] of Object.entries(FROM_EVENTS)) counters[column] = counted.get(type) ?? 0;
      const engaged = async (column: 'opened_at' | 'clicked_at') => {
        const [row] = await trx('send_recipients as r')
          .join('message_sends as s', 's.id', 'r.send_id')
          .where('s.message_id', messageId)
          .whereNotNull(`r.${column}`)
          .countDistinct({ n: 'r.subscriber_id' });
        return toInt(row.n);
      };
      counters.count_read = await engaged('opened_at');
      counters.count_clicked = await engaged('clicked_at');
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
