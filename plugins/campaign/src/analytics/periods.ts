import { dayOf } from '../daily-figures';

export const PERIODS = ['7d', '30d', '90d', '1y'] as const;
export type Period = (typeof PERIODS)[number];
const PERIOD_DAYS: Record<Period, number> = { '7d': 7, '30d': 30, '90d': 90, '1y': 365 };
const DAY_MS = 86_400_000;

/** A run of UTC days, both ends included. */
export interface DayRange {
  from: string;
  to: string;
}

/** The day `n` days after (or before) a day. */
export const addDays = (day: string, n: number): string => dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS));

/** Every day of a range, oldest first. */
export function daysOf(range: DayRange): string[] {
  const days: string[] = [];
  for (let day = range.from; day <= range.to; day = addDays(day, 1)) days.push(day);
  return days;
}

/**
 * A period ends with today (UTC) and holds its number of days (1y: 365); the previous period is the
 * same number of days just before it.
 */
export function periodRanges(period: Period, now: Date): { current: DayRange; previous: DayRange } {
  const today = dayOf(now);
  const days = PERIOD_DAYS[period];
  const from = addDays(today, -(days - 1));
  return { current: { from, to: today }, previous: { from: addDays(from, -days), to: addDays(from, -1) } };
}

/** A figure of a period beside the previous period's. */
export const compared = (current: number, previous: number) => ({
  current,
  previous,
  change: Math.round((current - previous) * 100) / 100,
});

export const periodQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    period: {
      enum: PERIODS,
      default: '30d',
      description: 'The last 7, 30, 90 or 365 UTC days up to today, compared with as many days before',
    },
  },
} as const;

export const dayRangeSchema = {
  type: 'object',
  required: ['from', 'to'],
  properties: { from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } },
} as const;
