import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, Clock, SERVICES, toBool, toInt, transactionWithRetry } from '@switchboard/core';
import { MailEventLedger } from '../mail-events';
import { TrackedIds, TrackingLinks } from './tracking-links';

const invalid = () => new AppError('RESOURCE_NOT_FOUND', 'This link is not valid');

/**
 * Opens and clicks of tracked mail: the first of each per mail counts on the message (stats.opened,
 * stats.clicked) and the subscriber (messages_opened, messages_clicked); a click is an open too (the
 * mail-event ledger). A link whose signature does not hold is a 404 and counts nothing.
 */
@injectable()
export class TrackingService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(TrackingLinks) private readonly links: TrackingLinks,
    @inject(MailEventLedger) private readonly ledger: MailEventLedger,
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

  /**
   * `click`: the clicked url, null for an open. A mail of a message deleted since (its sends went with
   * it) counts nowhere, and its link still leads on: the token is ours and signs the url.
   */
  private async record(ids: TrackedIds, click: string | null): Promise<void> {
    const send = await this.knex('message_sends')
      .where({ id: ids.sendId, organization_id: ids.organizationId })
      .first('message_id', 'test_mode');
    if (!send) return;
    const now = this.clock.now();
    await transactionWithRetry(this.knex, (trx) =>
      this.ledger.apply(trx, now, [
        {
          type: click === null ? 'opened' : 'clicked',
          organizationId: ids.organizationId,
          messageId: toInt(send.message_id),
          subscriberId: ids.subscriberId,
          sendId: ids.sendId,
          occurredAt: now,
          source: { kind: 'tracking' },
          url: click,
          testMode: toBool(send.test_mode),
        },
      ]),
    );
  }
}
