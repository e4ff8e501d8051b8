import type { Knex } from 'knex';
import { addOnConflict } from '@switchboard/core';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

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
      // Floored for times before 1970 too, whose remainder is negative.
      const start = time - (((time % size) + size) % size);
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
    await addOnConflict(
      trx,
      'message_event_rollups',
      ['message_id', 'period', 'period_start', 'event_type'],
      'events',
      [...this.counts.values()],
    );
  }
}
