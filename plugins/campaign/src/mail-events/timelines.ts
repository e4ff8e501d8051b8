import type { Knex } from 'knex';
import { dialectOfKnex } from '@switchboard/core';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const UPSERT_CHUNK = 500;

interface PeriodCount {
  message_id: number;
  period: 'h' | 'd';
  period_start: Date;
  event_type: string;
  events: number;
}

/** Counted events by message, hour and day, added to the stored timelines in one upsert per 500 periods. */
export class TimelineCounts {
  private readonly counts = new Map<string, PeriodCount>();

  add(messageId: number, eventType: string, at: Date): void {
    const time = at.getTime();
    for (const [period, size] of [
      ['h', HOUR],
      ['d', DAY],
    ] as const) {
      const start = time - (time % size);
      const key = `${messageId}.${period}.${start}.${eventType}`;
      const row = this.counts.get(key);
      if (row) row.events++;
      else
        this.counts.set(key, {
          message_id: messageId,
          period,
          period_start: new Date(start),
          event_type: eventType,
          events: 1,
        });
    }
  }

  async save(trx: Knex.Transaction): Promise<void> {
    const rows = [...this.counts.values()];
    const added =
      dialectOfKnex(trx) === 'mysql'
        ? trx.raw('`events` + VALUES(`events`)')
        : trx.raw('"message_event_rollups"."events" + excluded."events"');
    for (let i = 0; i < rows.length; i += UPSERT_CHUNK)
      await trx('message_event_rollups')
        .insert(rows.slice(i, i + UPSERT_CHUNK))
        .onConflict(['message_id', 'period', 'period_start', 'event_type'])
        .merge({ events: added });
  }
}
