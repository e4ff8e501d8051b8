import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, Clock, SERVICES, transactionWithRetry } from '@switchboard/core';
import { ensureStatusCountRows, SubscriberWriter } from '../audience/subscribers';
import { MailEventLedger } from '../mail-events';
import { TEST_RECIPIENT, UnsubscribeLinks } from './unsubscribe-links';

const invalid = () => new AppError('RESOURCE_NOT_FOUND', 'This unsubscribe link is not valid');

/** The one-click unsubscribe of a mail's link: who it is for, and unsubscribing them once. */
@injectable()
export class UnsubscribeService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(UnsubscribeLinks) private readonly links: UnsubscribeLinks,
    @inject(SubscriberWriter) private readonly writer: SubscriberWriter,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(MailEventLedger) private readonly ledger: MailEventLedger,
  ) {}

  /** The address a link unsubscribes, and whether it is unsubscribed already; `test`: a test mail's link. */
  async describe(token: string): Promise<{ email: string; unsubscribed: boolean; test?: boolean }> {
    const ids = await this.links.read(token);
    if (!ids) throw invalid();
    if (ids.subscriberId === TEST_RECIPIENT) return { email: '', unsubscribed: false, test: true };
    const row = await this.knex('subscribers')
      .where({ organization_id: ids.organizationId, id: ids.subscriberId })
      .first('email', 'status');
    if (!row) throw invalid();
    return { email: String(row.email), unsubscribed: row.status === 'unsubscribed' };
  }

  /**
   * Unsubscribes the link's subscriber; the message counts it once (stats.unsubscribed), and its record
   * lets the statistics rebuild from records alone (the mail-event ledger).
   */
  async unsubscribe(token: string): Promise<{ email: string; test?: boolean }> {
    const ids = await this.links.read(token);
    if (!ids) throw invalid();
    if (ids.subscriberId === TEST_RECIPIENT) return { email: '', test: true };
    const now = this.clock.now();
    await ensureStatusCountRows(this.knex, ids.organizationId);
    const email = await transactionWithRetry(this.knex, async (trx) => {
      const [current] = await this.writer.locked(trx, ids.organizationId, [ids.subscriberId]);
      if (!current) throw invalid();
      if (current.status !== 'unsubscribed')
        await this.ledger.apply(trx, now, [
          {
            type: 'unsubscribed',
            organizationId: ids.organizationId,
            messageId: ids.messageId,
            subscriberId: ids.subscriberId,
            occurredAt: now,
            source: { kind: 'link' },
            email: current.email,
          },
        ]);
      return current.email;
    });
    return { email };
  }
}
