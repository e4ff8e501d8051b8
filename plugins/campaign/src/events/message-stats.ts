import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { ApiGroup, idParams, ownedRow, PluginContext, SERVICES, toInt, toIsoRequired } from '@switchboard/core';
import { envelopes, okSchema } from '../shared/envelope';
import { rate } from '../shared/rates';

/** What a timeline entry counts: the summary's events. */
const EVENT_TYPES = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed'];
/** The most recent hours and days a timeline shows (periods without events are left out). */
const HOURS = 168;
const DAYS = 366;
const SUMMARY: Record<string, string> = {
  sent: 'count_sent',
  delivered: 'count_delivered',
  opened: 'count_read',
  clicked: 'count_clicked',
  unsubscribed: 'count_stop',
  bounced: 'count_bounced',
  complained: 'count_complained',
  unique_opened: 'unique_opened',
  unique_clicked: 'unique_clicked',
};

const integers = (names: string[]) => ({
  type: 'object',
  required: names,
  properties: Object.fromEntries(names.map((n) => [n, { type: 'integer' }])),
});
const timelineEntry = {
  type: 'object',
  required: ['period_start', ...EVENT_TYPES],
  properties: {
    period_start: { type: 'string', format: 'date-time', description: 'The hour or day (UTC) the counts are of' },
    ...integers(EVENT_TYPES).properties,
  },
} as const;
const percentages = ['delivery_rate', 'open_rate', 'click_rate', 'unsubscribe_rate', 'bounce_rate', 'complaint_rate'];

export const messageStatsSchema = {
  type: 'object',
  required: ['summary', 'rates', 'timeline'],
  properties: {
    summary: integers(Object.keys(SUMMARY)),
    rates: {
      type: 'object',
      description:
        'Percentages of sent mail, two decimals (0 before anything is sent); open and click rates of the mails opened and clicked (unique_opened, unique_clicked)',
      required: percentages,
      properties: Object.fromEntries(percentages.map((n) => [n, { type: 'number' }])),
    },
    timeline: {
      type: 'object',
      required: ['hourly', 'daily'],
      properties: {
        hourly: {
          type: 'array',
          items: timelineEntry,
          description: `The summary's events per hour, the last ${HOURS} hours that have any`,
        },
        daily: {
          type: 'array',
          items: timelineEntry,
          description: `The summary's events per day, the last ${DAYS} days that have any`,
        },
      },
    },
  },
} as const;

/**
 * A message's statistics: the summary from its counters (the same as GET /messages/{id}: every event, and
 * the mails opened and clicked), rates over sent mail, and the timeline of the same events from the hourly
 * and daily counts kept as they are counted: reading it costs the same at any number of events.
 */
@injectable()
export class MessageStats {
  constructor(@inject(SERVICES.Knex) private readonly knex: Knex) {}

  async of(orgId: number, id: number) {
    const row = await ownedRow(this.knex, 'messages', orgId, id, Object.values(SUMMARY), 'Message');
    const summary = Object.fromEntries(Object.entries(SUMMARY).map(([name, column]) => [name, toInt(row[column])]));
    const sent = summary.sent;
    const [hourly, daily] = await Promise.all([this.timeline(id, 'h', HOURS), this.timeline(id, 'd', DAYS)]);
    return {
      summary,
      rates: {
        delivery_rate: rate(summary.delivered, sent),
        open_rate: rate(summary.unique_opened, sent),
        click_rate: rate(summary.unique_clicked, sent),
        unsubscribe_rate: rate(summary.unsubscribed, sent),
        bounce_rate: rate(summary.bounced, sent),
        complaint_rate: rate(summary.complained, sent),
      },
      timeline: { hourly, daily },
    };
  }

  private async timeline(messageId: number, period: 'h' | 'd', periods: number) {
    const starts = (
      await this.knex('message_event_rollups')
        .where({ message_id: messageId, period })
        .distinct('period_start')
        .orderBy('period_start', 'desc')
        .limit(periods)
    ).map((r: { period_start: unknown }) => r.period_start);
    if (!starts.length) return [];
    const rows: Array<Record<string, unknown>> = await this.knex('message_event_rollups')
      .where({ message_id: messageId, period })
      // The oldest of those periods, as the database gave it back.
      .andWhere('period_start', '>=', starts[starts.length - 1] as Date)
      .select('period_start', 'event_type', 'events');
    const entries = new Map<string, Record<string, number | string>>();
    for (const r of rows) {
      const start = toIsoRequired(r.period_start);
      const entry =
        entries.get(start) ??
        entries.set(start, { period_start: start, ...Object.fromEntries(EVENT_TYPES.map((t) => [t, 0])) }).get(start)!;
      entry[String(r.event_type)] = toInt(r.events);
    }
    return [...entries.values()].sort((a, b) => String(a.period_start).localeCompare(String(b.period_start)));
  }
}

export function messageStatsRoutes(group: ApiGroup, ctx: PluginContext): void {
  const stats = ctx.container.resolve(MessageStats);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);
  group.get(
    '/messages/:id/stats',
    {
      summary: "A message's statistics: summary, rates and timeline",
      permission: 'messages:read',
      params: idParams,
      response: { schema: okSchema(messageStatsSchema) },
    },
    async ({ auth, params }) => envelope.ok(await stats.of(auth.organizationId, params.id)),
  );
}
