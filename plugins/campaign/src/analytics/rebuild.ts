import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { notFound, SERVICES, toDate, toInt } from '@switchboard/core';
import { dayOf, Metrics, METRIC, addMailMetrics } from '../daily-figures';
import { messageCounterOf, pages, replayCounted } from '../mail-events';

const INSERT_CHUNK = 500;

type Row = Record<string, unknown>;

/**
 * `campaign:analytics:rebuild`: an organization's daily figures recomputed from the rows (after the upgrade
 * to campaign 1.10, or to repair them). Mail figures come back exactly: the mail-event ledger's counted
 * events replayed (recipients' sent, first-open and first-click times, event records by the time they
 * were received), messages by when their sending finished. Subscriber figures come back as far as the rows date them: a subscriber counts from the day
 * it was created, in its status of now, an unsubscribed one as active until its unsubscribed_at; the
 * history of deleted subscribers and of undated status changes is gone with them.
 */
@injectable()
export class AnalyticsRebuild {
  constructor(@inject(SERVICES.Knex) private readonly knex: Knex) {}

  async run(organizationId?: number): Promise<{ organizations: number; rows: number }> {
    const organizations: number[] = (
      await this.knex('organizations')
        .modify((q) => (organizationId === undefined ? q : q.where({ id: organizationId })))
        .orderBy('id')
        .pluck('id')
    ).map(toInt);
    // One named that does not exist is the caller's mistake, not an empty rebuild (the command exits 1).
    if (organizationId !== undefined && !organizations.length) throw notFound('Organization', organizationId);
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
    await pages(
      this.knex('subscribers as s')
        .leftJoin('subscriber_engagement as e', 'e.subscriber_id', 's.id')
        .where('s.organization_id', org),
      's.id',
      [
        's.id as id',
        's.status as status',
        's.created_at as created_at',
        's.unsubscribed_at as unsubscribed_at',
        'e.last_engaged_day as last_engaged_day',
      ],
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
    await replayCounted(this.knex, { organizationId: org }, (e) => {
      const day = dayOf(e.countedAt);
      addMailMetrics(byDay.get(day) ?? byDay.set(day, {}).get(day)!, messageCounterOf(e), e.countedAt);
    });
    // Each send that finished, as counted live: a schedule's every run, not its message's last alone (session 34).
    const finished: Row[] = await this.knex('message_sends')
      .where({ organization_id: org, status: 'sent', test_mode: false })
      .select('message_id', 'finished_at', 'updated_at');
    for (const r of finished) add(r.finished_at ?? r.updated_at, METRIC.messagesSent);
    // A message sent before campaign 1.6 has no send rows: its day is its sent_at.
    const withSends = new Set(finished.map((r) => toInt(r.message_id)));
    const sentMessages: Row[] = await this.knex('messages')
      .where({ organization_id: org, status: 'sent' })
      .whereNotNull('sent_at')
      .select('id', 'sent_at');
    for (const r of sentMessages) if (!withSends.has(toInt(r.id))) add(r.sent_at, METRIC.messagesSent);

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
}
