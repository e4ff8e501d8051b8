import { loadOnFirstUse } from '@switchboard/core';

// Loaded where first used: the CLI lists its commands without it.
const luxon = loadOnFirstUse(() => require('luxon') as typeof import('luxon'));
import type { NewSchedule } from './schemas';

/** A schedule's rule: send_time is HH:MM wall-clock time in the timezone, day_of_week (weekly only) 0 = Sunday ... 6 = Saturday. */
export type Recurrence = Pick<NewSchedule, 'frequency' | 'send_time' | 'timezone' | 'day_of_week'>;

/**
 * The first send strictly after `after`, in UTC. Wall-clock time in the schedule's zone: across a
 * DST change the UTC instant moves so the local time stays. A time that does not exist that day (the
 * spring-forward gap) is moved forward by the gap; an ambiguous one (fall-back) takes the first.
 */
export function nextRunAt(rule: Recurrence, after: Date): Date {
  const [hour, minute] = rule.send_time.split(':').map(Number);
  const local = luxon().DateTime.fromJSDate(after, { zone: rule.timezone });
  for (let days = 0; days <= 8; days++) {
    const day = local.plus({ days }).startOf('day');
    if (rule.frequency === 'weekly' && day.weekday % 7 !== rule.day_of_week) continue;
    const candidate = day.set({ hour, minute, second: 0, millisecond: 0 });
    if (candidate.toMillis() > after.getTime()) return candidate.toUTC().toJSDate();
  }
  throw new Error('no next run found within 8 days');
}
