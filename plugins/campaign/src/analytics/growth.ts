import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, SERVICES } from '@switchboard/core';
import { rate } from '../shared/rates';
import { readDailyMetrics, METRIC } from '../daily-figures';
import { DayRange, daysOf, addDays, Period, periodRanges } from './periods';
import { statusCountsByDay } from './subscriber-figures';

const periodFigures = {
  type: 'object',
  additionalProperties: false,
  required: ['new_subscribers', 'unsubscribes', 'net_growth', 'growth_rate'],
  properties: {
    new_subscribers: { type: 'integer', description: 'Subscribers created in the period (any status)' },
    unsubscribes: { type: 'integer', description: 'Subscribers who moved to unsubscribed in the period' },
    net_growth: { type: 'integer', description: 'new_subscribers - unsubscribes' },
    growth_rate: {
      type: 'number',
      description:
        'net_growth in percent of the active subscribers at the start of the period, two decimals; 0 when there were none',
    },
  },
} as const;

export const growthSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['current_period', 'previous_period', 'chart_data'],
  properties: {
    current_period: periodFigures,
    previous_period: periodFigures,
    chart_data: {
      type: 'array',
      description: 'One entry per UTC day of the current period, oldest first, no gaps',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['date', 'subscribers', 'new', 'unsubscribed'],
        properties: {
          date: { type: 'string', format: 'date' },
          subscribers: { type: 'integer', description: 'Active subscribers at the end of the day' },
          new: { type: 'integer', description: 'Subscribers created that day' },
          unsubscribed: { type: 'integer', description: 'Subscribers who unsubscribed that day' },
        },
      },
    },
  },
} as const;

/** GET /analytics/growth: new subscribers and unsubscribes of a period and the one before, and a daily chart. */
@injectable()
export class GrowthAnalytics {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async of(organizationId: number, period: Period) {
    const { current, previous } = periodRanges(period, this.clock.now());
    const whole: DayRange = { from: previous.from, to: current.to };
    const [rows, counts] = await Promise.all([
      readDailyMetrics(
        this.knex,
        organizationId,
        [METRIC.newSubscribers, METRIC.movedInto('unsubscribed')],
        whole.from,
        whole.to,
      ),
      statusCountsByDay(this.knex, organizationId, whole),
    ]);
    const value = new Map(rows.map((r) => [`${r.day} ${r.metric}`, r.value]));
    const on = (day: string, metric: string) => value.get(`${day} ${metric}`) ?? 0;
    const figures = (range: DayRange) => {
      let created = 0;
      let unsubscribes = 0;
      for (const day of daysOf(range)) {
        created += on(day, METRIC.newSubscribers);
        unsubscribes += on(day, METRIC.movedInto('unsubscribed'));
      }
      const net = created - unsubscribes;
      const atStart = counts.get(addDays(range.from, -1))!.active;
      return { new_subscribers: created, unsubscribes, net_growth: net, growth_rate: rate(net, atStart) };
    };
    return {
      current_period: figures(current),
      previous_period: figures(previous),
      chart_data: daysOf(current).map((date) => ({
        date,
        subscribers: counts.get(date)!.active,
        new: on(date, METRIC.newSubscribers),
        unsubscribed: on(date, METRIC.movedInto('unsubscribed')),
      })),
    };
  }
}
