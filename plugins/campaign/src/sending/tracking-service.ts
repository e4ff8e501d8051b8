import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, Clock, SERVICES, toInt, transactionWithRetry } from '@switchboard/core';
import { MailCounts } from '../analytics/mail-counts';
import { TrackedIds, TrackingLinks } from './tracking-links';
import { WebhookOutbox } from '../webhooks/outbox';

const invalid = () => new AppError('RESOURCE_NOT_FOUND', 'This link is not valid');

/**
 * Opens and clicks of tracked mail: the first of each per recipient counts on the message (stats.opened,
 * stats.clicked) and the subscriber (messages_opened, messages_clicked); a click is an open too. A link
 * whose signature does not hold is a 404 and counts nothing.
 */
@injectable()
export class TrackingService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(TrackingLinks) private readonly links: TrackingLinks,
    @inject(WebhookOutbox) private readonly webhooks: WebhookOutbox,
  ) {}

  async open(token: string): Promise<void> {
    const ids = await this.links.readOpen(token);
    if (!ids) throw invalid();
    await this.record(ids, null);
  }

  /** The URL to send the reader on to. */
  async click(token: string, url: string): Promise<string> {
    const ids = await this.links.readClick(token, url);
    if (!ids) throw invalid();
    await this.record(ids, url);
    return url;
  }

  /** `click`: the clicked url, null for an open. */
  private async record(ids: TrackedIds, click: string | null): Promise<void> {
    const send = await this.knex('message_sends')
      .where({ id: ids.sendId, organization_id: ids.organizationId })
      .first('message_id', 'test_mode');
    if (!send) throw invalid();
    const now = this.clock.now();
    await transactionWithRetry(this.knex, async (trx) => {
      const first = (column: 'opened_at' | 'clicked_at') =>
        trx('send_recipients')
          .where({ send_id: ids.sendId, subscriber_id: ids.subscriberId })
          .whereNull(column)
          .update({ [column]: now });
      const opened = await first('opened_at');
      const clicked = click !== null ? await first('clicked_at') : 0;
      if (!opened && !clicked) return;
      const messageId = toInt(send.message_id);
      const counts = (message: string, subscriber: string, n: number) =>
        n
          ? Promise.all([
              trx('messages').where({ id: messageId }).increment(message, n),
              trx('subscribers').where({ id: ids.subscriberId }).increment(subscriber, n),
            ])
          : null;
      await counts('count_read', 'messages_opened', opened);
      await counts('count_clicked', 'messages_clicked', clicked);
      const analytics = new MailCounts(now);
      analytics.count(ids.organizationId, 'count_read', ids.subscriberId, opened);
      analytics.count(ids.organizationId, 'count_clicked', ids.subscriberId, clicked);
      await analytics.save(trx);
      if (send.test_mode) return;
      const mail = { message_id: messageId, send_id: ids.sendId, subscriber_id: ids.subscriberId };
      await this.webhooks.emit(trx, ids.organizationId, [
        ...(opened ? [{ event: 'opened' as const, occurredAt: now, data: mail }] : []),
        ...(clicked ? [{ event: 'clicked' as const, occurredAt: now, data: { ...mail, url: click } }] : []),
      ]);
    });
  }
}
