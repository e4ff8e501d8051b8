import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { SERVICES, toDate, toInt } from '@switchboard/core';
import { dayOf, Metrics } from './daily-metrics';
import { METRIC } from './metric-names';

const PAGE = 5_000;
const INSERT_CHUNK = 500;
/** Provider events that count on their message, as the event recorder counts them. */
const COUNTED_EVENTS = ['delivered', 'bounced', 'complained', 'unsubscribed'] as const;

type Row = Record<string, unknown>;

/**
 * `campaign:analytics:rebuild`: an organization's daily figures recomputed from the rows (after the upgrade
 * to campaign 1.10, or to repair them). Mail figures come back exactly: recipients' sent, first-open and
 * first-click times, event records by the time they were received, messages by when their sending
 * finished. Subscriber figures come back as far as the rows date them: a subscriber counts from the day
 * it was created, in its status of now, an unsubscribed one as active until its unsubscribed_at; the
 * history of deleted subscribers and of undated status changes is gone with them.
 */
@injectable()
export class AnalyticsRebuild {
  constructor(@inject(SERVICES.Knex) private readonly knex: Knex) {}

  async run(organizationId?: number): Promise<{ organizations: number; rows: number }> {
    const organizations: number[] =
      organizationId === undefined
        ? (await this.knex('organizations').orderBy('id').pluck('id')).map(toInt)
        : [organizationId];
    let rows = 0;
    for (const org of organizations) rows += await this.rebuild(org);
    return { organizations: organizations.length, rows };
  }

  private async rebuild(org: number): Promise<number> {
    const byDay = new Map<string, Metrics>();
    const add = (at: unknown, metric: string, n = 1) => {
      const date = toDate(at);
      if (!date) return;
      const day = typeof at === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(at) ? at : dayOf(date);
      const metrics = byDay.get(day) ?? byDay.set(day, {}).get(day)!;
      metrics[metric] = (metrics[metric] ?? 0) + n;
    };
    await this.pages(
      this.knex('subscribers').where('organization_id', org),
      'id',
      ['id', 'status', 'created_at', 'unsubscribed_at', 'last_engaged_day'],
      (r) => {
        add(r.created_at, METRIC.newSubscribers);
        const status = String(r.status);
        if (status === 'unsubscribed' && r.unsubscribed_at) {
          add(r.created_at, METRIC.statusNet('active'));
          add(r.unsubscribed_at, METRIC.statusNet('active'), -1);
          add(r.unsubscribed_at, METRIC.statusNet('unsubscribed'));
          add(r.unsubscribed_at, METRIC.movedInto('unsubscribed'));
        } else add(r.created_at, METRIC.statusNet(status));
        if (r.last_engaged_day) add(String(r.last_engaged_day), METRIC.lastEngaged);
      },
    );
    const sends: number[] = (
      await this.knex('message_sends').where({ organization_id: org, test_mode: false }).orderBy('id').pluck('id')
    ).map(toInt);
    for (const sendId of sends)
      await this.pages(
        this.knex('send_recipients').where('send_id', sendId),
        'subscriber_id',
        ['subscriber_id', 'sent_at', 'opened_at', 'clicked_at'],
        (r) => {
          add(r.sent_at, METRIC.mail('sent'));
          add(r.opened_at, METRIC.mail('opened'));
          const opened = toDate(r.opened_at);
          if (opened) add(r.opened_at, METRIC.opensInHour(opened.getUTCHours()));
          add(r.clicked_at, METRIC.mail('clicked'));
        },
      );
    await this.pages(
      this.knex('inbound_events')
        .where('organization_id', org)
        .whereNotNull('message_id')
        .whereNotNull('subscriber_id')
        .whereIn('event_type', COUNTED_EVENTS),
      'id',
      ['id', 'event_type', 'received_at'],
      (r) => add(r.received_at, METRIC.mail(r.event_type as (typeof COUNTED_EVENTS)[number])),
    );
    const finished: Row[] = await this.knex('messages')
      .where({ organization_id: org, status: 'sent' })
      .whereNotNull('sent_at')
      .select('sent_at');
    for (const r of finished) add(r.sent_at, METRIC.messagesSent);

    const rows = [...byDay].flatMap(([day, metrics]) =>
      Object.entries(metrics)
        .filter(([, value]) => value !== 0)
        .map(([metric, value]) => ({ organization_id: org, day, metric, value })),
    );
    await this.knex.transaction(async (trx) => {
      await trx('analytics_daily').where('organization_id', org).delete();
      for (let i = 0; i < rows.length; i += INSERT_CHUNK)
        await trx('analytics_daily').insert(rows.slice(i, i + INSERT_CHUNK));
    });
    return rows.length;
  }

  /** Reads a query's rows a page at a time, in the order of a unique column. */
  private async pages(
    query: Knex.QueryBuilder,
    key: string,
    columns: string[],
    each: (row: Row) => void,
  ): Promise<void> {
    for (let after = 0; ;) {
      const rows: Row[] = await query.clone().andWhere(key, '>', after).orderBy(key).limit(PAGE).select(columns);
      rows.forEach(each);
      if (rows.length < PAGE) break;
      after = toInt(rows[rows.length - 1][key]);
    }
  }
}
