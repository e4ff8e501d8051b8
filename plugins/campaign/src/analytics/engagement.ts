import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, SERVICES } from '@switchboard/core';
import { rate } from '../shared/rates';
import { dayOf, readDailyMetrics, sumDailyMetrics, METRIC } from '../daily-figures';
import { addDays } from './periods';
import { statusCountsNow } from './subscriber-figures';

const HOURS = Array.from({ length: 24 }, (_, h) => h);
const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
/** Opens by hour and weekday are those of the last 90 days. */
const OPEN_DAYS = 90;

export const engagementSchema = {
  type: 'object',
  required: [
    'subscribers',
    'active_last_30_days',
    'active_last_90_days',
    'never_engaged',
    'engagement_rate_30_days',
    'opens_by_hour',
    'opens_by_weekday',
  ],
  properties: {
    subscribers: { type: 'integer', description: 'Subscribers of any status' },
    active_last_30_days: {
      type: 'integer',
      description: 'Subscribers whose latest first open or click of a mail was in the last 30 UTC days',
    },
    active_last_90_days: { type: 'integer', description: 'The same within 90 days' },
    never_engaged: { type: 'integer', description: 'Subscribers who never opened or clicked a mail' },
    engagement_rate_30_days: { type: 'number', description: 'active_last_30_days in percent of subscribers' },
    opens_by_hour: {
      type: 'array',
      description: `First opens of the last ${OPEN_DAYS} days by UTC hour, 0 to 23`,
      items: {
        type: 'object',
        required: ['hour', 'opens'],
        properties: { hour: { type: 'integer' }, opens: { type: 'integer' } },
      },
    },
    opens_by_weekday: {
      type: 'array',
      description: `First opens of the last ${OPEN_DAYS} days by UTC weekday, Monday first`,
      items: {
        type: 'object',
        required: ['weekday', 'opens'],
        properties: { weekday: { enum: WEEKDAYS }, opens: { type: 'integer' } },
      },
    },
  },
} as const;

/** GET /analytics/engagement: who is active, who never engaged, and when mail is opened. */
@injectable()
export class EngagementAnalytics {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async of(organizationId: number) {
    const today = dayOf(this.clock.now());
    const hourMetrics = HOURS.map((h) => METRIC.opensInHour(h));
    const engaged = (from: string) =>
      sumDailyMetrics(this.knex, organizationId, [METRIC.lastEngaged], from, '9999-12-31').then(
        (sums) => sums[METRIC.lastEngaged],
      );
    const [counts, last30, last90, ever, opens] = await Promise.all([
      statusCountsNow(this.knex, organizationId),
      engaged(addDays(today, -29)),
      engaged(addDays(today, -89)),
      engaged('0000-01-01'),
      readDailyMetrics(this.knex, organizationId, hourMetrics, addDays(today, -(OPEN_DAYS - 1)), today),
    ]);
    const subscribers = Object.values(counts).reduce((a, b) => a + b, 0);
    const byHour = HOURS.map(() => 0);
    const byWeekday = WEEKDAYS.map(() => 0);
    for (const o of opens) {
      byHour[Number(o.metric.slice(-2))] += o.value;
      // getUTCDay: 0 is Sunday.
      byWeekday[(new Date(`${o.day}T00:00:00Z`).getUTCDay() + 6) % 7] += o.value;
    }
    return {
      subscribers,
      active_last_30_days: last30,
      active_last_90_days: last90,
      never_engaged: subscribers - ever,
      engagement_rate_30_days: rate(last30, subscribers),
      opens_by_hour: HOURS.map((hour) => ({ hour, opens: byHour[hour] })),
      opens_by_weekday: WEEKDAYS.map((weekday, i) => ({ weekday, opens: byWeekday[i] })),
    };
  }
}
