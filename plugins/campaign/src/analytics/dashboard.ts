import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, SERVICES, toInt, toIso } from '@switchboard/core';
import { rate } from '../shared/rates';
import { sumDailyMetrics, MAIL_EVENTS, METRIC } from '../daily-figures';
import { compared, DayRange, dayRangeSchema, Period, periodRanges } from './periods';
import { statusCountsByDay } from './subscriber-figures';

const BEST_MESSAGES = 5;

const comparedSchema = (description: string, type: 'integer' | 'number' = 'integer') => ({
  type: 'object',
  description,
  required: ['current', 'previous', 'change'],
  properties: {
    current: { type },
    previous: { type, description: 'The same figure of the previous period' },
    change: { type: 'number', description: 'current - previous' },
  },
});

export const bestMessageSchema = {
  type: 'object',
  required: ['id', 'name', 'subject', 'sent_at', 'sent', 'open_rate', 'click_rate'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    subject: { type: 'string' },
    sent_at: { type: ['string', 'null'], format: 'date-time' },
    sent: { type: 'integer' },
    open_rate: { type: 'number' },
    click_rate: { type: 'number' },
  },
} as const;

export const dashboardSchema = {
  type: 'object',
  required: [
    'period',
    'current_period',
    'previous_period',
    'subscribers',
    'messages_sent',
    'mails',
    'rates',
    'best_messages',
  ],
  properties: {
    period: { type: 'string' },
    current_period: dayRangeSchema,
    previous_period: dayRangeSchema,
    subscribers: {
      type: 'object',
      required: ['total', 'active', 'unsubscribed', 'bounced', 'new'],
      properties: {
        total: comparedSchema('Subscribers of any status at the end of the period'),
        active: comparedSchema('Active subscribers at the end of the period'),
        unsubscribed: comparedSchema('Unsubscribed subscribers at the end of the period'),
        bounced: comparedSchema('Bounced subscribers at the end of the period'),
        new: comparedSchema('Subscribers created in the period'),
      },
    },
    messages_sent: comparedSchema('Messages whose sending finished in the period'),
    mails: {
      type: 'object',
      required: ['sent', 'delivered'],
      properties: {
        sent: comparedSchema('Mails sent in the period'),
        delivered: comparedSchema('Deliveries reported in the period'),
      },
    },
    rates: {
      type: 'object',
      description: 'Percent of the mails sent in the period, two decimals (0 when none was sent)',
      required: ['open_rate', 'click_rate', 'bounce_rate', 'unsubscribe_rate'],
      properties: {
        open_rate: comparedSchema('First opens of mails in the period', 'number'),
        click_rate: comparedSchema('First clicks of mails in the period', 'number'),
        bounce_rate: comparedSchema('Bounces in the period', 'number'),
        unsubscribe_rate: comparedSchema('Unsubscribes from mails in the period', 'number'),
      },
    },
    best_messages: {
      type: 'array',
      description: `The ${BEST_MESSAGES} messages sent in the period with the best open rate (then click rate)`,
      items: bestMessageSchema,
    },
  },
} as const;

/** GET /analytics/dashboard: what a campaign manager looks at first, beside the previous period's figures. */
@injectable()
export class DashboardAnalytics {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async of(organizationId: number, period: Period) {
    const { current, previous } = periodRanges(period, this.clock.now());
    const metrics = [METRIC.newSubscribers, METRIC.messagesSent, ...MAIL_EVENTS.map((e) => METRIC.mail(e))];
    const sums = (range: DayRange) => sumDailyMetrics(this.knex, organizationId, metrics, range.from, range.to);
    const [now, before, counts, best] = await Promise.all([
      sums(current),
      sums(previous),
      statusCountsByDay(this.knex, organizationId, current),
      this.bestMessages(organizationId, current),
    ]);
    const end = counts.get(current.to)!;
    const previousEnd = counts.get(previous.to)!;
    const total = (c: typeof end) => Object.values(c).reduce((a, b) => a + b, 0);
    const mailRate = (event: (typeof MAIL_EVENTS)[number]) =>
      compared(
        rate(now[METRIC.mail(event)], now[METRIC.mail('sent')]),
        rate(before[METRIC.mail(event)], before[METRIC.mail('sent')]),
      );
    const both = (metric: string) => compared(now[metric], before[metric]);
    return {
      period,
      current_period: current,
      previous_period: previous,
      subscribers: {
        total: compared(total(end), total(previousEnd)),
        active: compared(end.active, previousEnd.active),
        unsubscribed: compared(end.unsubscribed, previousEnd.unsubscribed),
        bounced: compared(end.bounced, previousEnd.bounced),
        new: both(METRIC.newSubscribers),
      },
      messages_sent: both(METRIC.messagesSent),
      mails: { sent: both(METRIC.mail('sent')), delivered: both(METRIC.mail('delivered')) },
      rates: {
        open_rate: mailRate('opened'),
        click_rate: mailRate('clicked'),
        bounce_rate: mailRate('bounced'),
        unsubscribe_rate: mailRate('unsubscribed'),
      },
      best_messages: best,
    };
  }

  private async bestMessages(organizationId: number, range: DayRange) {
    const rows: Array<Record<string, unknown>> = await this.knex('messages')
      .where('organization_id', organizationId)
      .andWhere('count_sent', '>', 0)
      .andWhere('sent_at', '>=', new Date(`${range.from}T00:00:00Z`))
      .orderByRaw('unique_opened * 1.0 / count_sent desc, unique_clicked * 1.0 / count_sent desc, id desc')
      .limit(BEST_MESSAGES)
      .select('id', 'name', 'subject', 'sent_at', 'count_sent', 'unique_opened', 'unique_clicked');
    return rows.map((r) => ({
      id: toInt(r.id),
      name: String(r.name),
      subject: String(r.subject),
      sent_at: toIso(r.sent_at),
      sent: toInt(r.count_sent),
      open_rate: rate(toInt(r.unique_opened), toInt(r.count_sent)),
      click_rate: rate(toInt(r.unique_clicked), toInt(r.count_sent)),
    }));
  }
}
