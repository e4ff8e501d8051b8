import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, SERVICES, toInt, toIso } from '@switchboard/core';
import { rate } from '../shared/rates';
import { readDailyMetrics, MAIL_COUNTER, MAIL_EVENTS, MailMetricEvent as MailEvent, METRIC } from '../daily-figures';
import { daysOf, dayRangeSchema, Period, periodRanges } from './periods';

const RANKED = 20;
const RATES: Array<[string, MailEvent]> = [
  ['delivery_rate', 'delivered'],
  ['open_rate', 'opened'],
  ['click_rate', 'clicked'],
  ['bounce_rate', 'bounced'],
  ['complaint_rate', 'complained'],
  ['unsubscribe_rate', 'unsubscribed'],
];
const RATE_NAMES = RATES.map(([name]) => name);

const figuresSchema = (extra: Record<string, object>, required: string[]) => ({
  type: 'object',
  required: [...required, ...MAIL_EVENTS, ...RATE_NAMES],
  properties: {
    ...extra,
    ...Object.fromEntries(MAIL_EVENTS.map((e) => [e, { type: 'integer' }])),
    ...Object.fromEntries(RATE_NAMES.map((r) => [r, { type: 'number', description: 'Percent of sent, two decimals' }])),
  },
});

export const performanceSchema = {
  type: 'object',
  required: ['period', 'current_period', 'totals', 'messages', 'timeline'],
  properties: {
    period: { type: 'string' },
    current_period: dayRangeSchema,
    totals: figuresSchema({}, []),
    messages: {
      type: 'array',
      description: `The ${RANKED} sent messages with the best open rate, then click rate (all time, from their counters)`,
      items: figuresSchema(
        {
          rank: { type: 'integer' },
          id: { type: 'integer' },
          name: { type: 'string' },
          subject: { type: 'string' },
          sent_at: { type: ['string', 'null'], format: 'date-time' },
        },
        ['rank', 'id', 'name', 'subject', 'sent_at'],
      ),
    },
    timeline: {
      type: 'array',
      description: 'One entry per UTC day of the period, oldest first, no gaps: what was counted that day',
      items: figuresSchema({ date: { type: 'string', format: 'date' } }, ['date']),
    },
  },
} as const;

const withRates = (counts: Record<MailEvent, number>) => ({
  ...counts,
  ...Object.fromEntries(RATES.map(([name, event]) => [name, rate(counts[event], counts.sent)])),
});

/** GET /analytics/performance: mail figures of the period, day by day, and the best messages ranked. */
@injectable()
export class PerformanceAnalytics {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async of(organizationId: number, period: Period) {
    const { current } = periodRanges(period, this.clock.now());
    const metrics = MAIL_EVENTS.map((e) => METRIC.mail(e));
    const [rows, ranked] = await Promise.all([
      readDailyMetrics(this.knex, organizationId, metrics, current.from, current.to),
      this.ranked(organizationId),
    ]);
    const value = new Map(rows.map((r) => [`${r.day} ${r.metric}`, r.value]));
    const zero = () => Object.fromEntries(MAIL_EVENTS.map((e) => [e, 0])) as Record<MailEvent, number>;
    const totals = zero();
    const timeline = daysOf(current).map((date) => {
      const counts = zero();
      for (const e of MAIL_EVENTS) {
        counts[e] = value.get(`${date} ${METRIC.mail(e)}`) ?? 0;
        totals[e] += counts[e];
      }
      return { date, ...withRates(counts) };
    });
    return { period, current_period: current, totals: withRates(totals), messages: ranked, timeline };
  }

  private async ranked(organizationId: number) {
    const rows: Array<Record<string, unknown>> = await this.knex('messages')
      .where('organization_id', organizationId)
      .andWhere('count_sent', '>', 0)
      .orderByRaw('unique_opened * 1.0 / count_sent desc, unique_clicked * 1.0 / count_sent desc, id desc')
      .limit(RANKED)
      .select('id', 'name', 'subject', 'sent_at', ...Object.values(MAIL_COUNTER));
    return rows.map((r, i) => ({
      rank: i + 1,
      id: toInt(r.id),
      name: String(r.name),
      subject: String(r.subject),
      sent_at: toIso(r.sent_at),
      ...withRates(
        Object.fromEntries(MAIL_EVENTS.map((e) => [e, toInt(r[MAIL_COUNTER[e]])])) as Record<MailEvent, number>,
      ),
    }));
  }
}
