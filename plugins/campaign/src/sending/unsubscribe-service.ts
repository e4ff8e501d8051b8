import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, Clock, SERVICES } from '@switchboard/core';
import { MailCounts } from '../analytics/mail-counts';
import { WebhookOutbox } from '../webhooks/outbox';
import { SubscriberWriter } from '../audience/subscribers/writer';
import { UnsubscribeLinks } from './unsubscribe-links';
import { recordLinkUnsubscribe } from '../events/own-events';

const invalid = () => new AppError('RESOURCE_NOT_FOUND', 'This unsubscribe link is not valid');

/** The one-click unsubscribe of a mail's link: who it is for, and unsubscribing them once. */
@injectable()
export class UnsubscribeService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(UnsubscribeLinks) private readonly links: UnsubscribeLinks,
    @inject(SubscriberWriter) private readonly writer: SubscriberWriter,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(WebhookOutbox) private readonly webhooks: WebhookOutbox,
  ) {}

  /** The address a link unsubscribes, and whether it is unsubscribed already. */
  async describe(token: string): Promise<{ email: string; unsubscribed: boolean }> {
    const ids = await this.links.read(token);
    if (!ids) throw invalid();
    const row = await this.knex('subscribers')
      .where({ organization_id: ids.organizationId, id: ids.subscriberId })
      .first('email', 'status');
    if (!row) throw invalid();
    return { email: String(row.email), unsubscribed: row.status === 'unsubscribed' };
  }

  /** Unsubscribes the link's subscriber; the message counts it once (stats.unsubscribed). */
  async unsubscribe(token: string): Promise<{ email: string }> {
    const ids = await this.links.read(token);
    if (!ids) throw invalid();
    const { email } = await this.describe(token);
    const now = this.clock.now();
    await this.writer.setStatus(
      ids.organizationId,
      ids.subscriberId,
      'unsubscribed',
      { unsubscribe_reason: 'unsubscribe link' },
      async (trx, previous) => {
        if (previous === 'unsubscribed') return;
        await trx('messages')
          .where({ organization_id: ids.organizationId, id: ids.messageId })
          .increment('count_stop', 1);
        const analytics = new MailCounts(now);
        analytics.count(ids.organizationId, 'count_stop');
        await analytics.save(trx);
        // Its record, so that the message's statistics rebuild from records alone.
        await recordLinkUnsubscribe(trx, ids, now);
        await this.webhooks.emit(trx, ids.organizationId, [
          {
            event: 'unsubscribed',
            occurredAt: now,
            data: { message_id: ids.messageId, subscriber_id: ids.subscriberId, email, source: 'unsubscribe link' },
          },
        ]);
      },
    );
    return { email };
  }
}
