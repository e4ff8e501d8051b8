import type { Knex } from 'knex';
import { dialectOfKnex, toDate, toInt } from '@switchboard/core';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** Adds recorded events to their messages' hourly and daily counts: one upsert for the whole request. */
export async function addToTimelines(
  trx: Knex.Transaction,
  events: Array<{ message_id: unknown; event_type: string; event_at: unknown }>,
): Promise<void> {
  const counts = new Map<
    string,
    { message_id: number; period: string; period_start: Date; event_type: string; events: number }
  >();
  for (const e of events) {
    const at = toDate(e.event_at)?.getTime() ?? Date.now();
    for (const [period, size] of [
      ['h', HOUR],
      ['d', DAY],
    ] as const) {
      const start = at - (at % size);
      const key = `${toInt(e.message_id)}.${period}.${start}.${e.event_type}`;
      const row = counts.get(key);
      if (row) row.events++;
      else
        counts.set(key, {
          message_id: toInt(e.message_id),
          period,
          period_start: new Date(start),
          event_type: e.event_type,
          events: 1,
        });
    }
  }
  if (!counts.size) return;
  const added =
    dialectOfKnex(trx) === 'mysql'
      ? trx.raw('`events` + VALUES(`events`)')
      : trx.raw('"message_event_rollups"."events" + excluded."events"');
  await trx('message_event_rollups')
    .insert([...counts.values()])
    .onConflict(['message_id', 'period', 'period_start', 'event_type'])
    .merge({ events: added });
}
