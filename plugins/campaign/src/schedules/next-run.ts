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
 * The days are calendar dates, stepped without a zone: stepping a zoned time kept its time of day, which
 * in a gap ending at midnight (America/Nuuk) landed on the next date and skipped a day (session 34).
 */
export function nextRunAt(rule: Recurrence, after: Date): Date {
  const [hour, minute] = rule.send_time.split(':').map(Number);
  const { DateTime } = luxon();
  const local = DateTime.fromJSDate(after, { zone: rule.timezone });
  const first = Date.UTC(local.year, local.month - 1, local.day);
  for (let days = 0; days <= 8; days++) {
    const date = new Date(first + days * DAY);
    if (rule.frequency === 'weekly' && date.getUTCDay() !== rule.day_of_week) continue;
    const candidate = wallClock(rule.timezone, date, hour, minute);
    if (candidate > after.getTime()) return new Date(candidate);
  }
  throw new Error('no next run found within 8 days');
}

const DAY = 86_400_000;
const HOUR = 3_600_000;

/**
 * The instant a date's wall-clock time is in the zone: the earliest of those showing it (a fall-back
 * repeats an hour), else, in a spring-forward gap, that time moved forward by the gap.
 */
function wallClock(zone: string, date: Date, hour: number, minute: number): number {
  const { DateTime } = luxon();
  const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
  const asUtc = Date.UTC(year, month - 1, day, hour, minute);
  // The zone's offsets around that time: before and after any change near it.
  const offsets = new Set([-14, -3, 0, 3, 14].map((h) => DateTime.fromMillis(asUtc + h * HOUR, { zone }).offset));
  const showing = [...offsets]
    .map((offset) => asUtc - offset * 60_000)
    .filter((at) => {
      const t = DateTime.fromMillis(at, { zone });
      return t.year === year && t.month === month && t.day === day && t.hour === hour && t.minute === minute;
    });
  if (showing.length) return Math.min(...showing);
  return DateTime.fromObject({ year, month, day, hour, minute }, { zone }).toMillis();
}
