import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, Clock, GroupCommit, SERVICES, transactionWithRetry } from '@switchboard/core';
import { ensureStatusCountRows, SubscriberWriter } from '../audience/subscribers';
import { MailEvent, MailEventLedger } from '../mail-events';
import { TEST_RECIPIENT, UnsubscribeLinks } from './unsubscribe-links';

const invalid = () => new AppError('RESOURCE_NOT_FOUND', 'This unsubscribe link is not valid');

/** The mail a link was in: its organization, message and subscriber. */
interface LinkMail {
  organizationId: number;
  messageId: number;
  subscriberId: number;
}

/** Unsubscribes in one run at most. */
const RUN_UNSUBSCRIBES = 200;

/** The one-click unsubscribe of a mail's link: who it is for, and unsubscribing them once. */
@injectable()
export class UnsubscribeService {
  /**
   * An organization's unsubscribes arriving together are applied together, one transaction for all (core
   * GroupCommit): mailbox providers post a campaign's in bursts from a few addresses (issue 24: 5,000 in a
   * minute). Runs are per organization, so that one organization's locked rows never hold another's back;
   * an organization's is let go once idle.
   */
  private readonly runs = new Map<number, GroupCommit<LinkMail, string | null>>();

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
    const email = await this.runsOf(ids.organizationId).submit(ids);
    if (email === null) throw invalid();
    return { email };
  }

  private runsOf(organizationId: number): GroupCommit<LinkMail, string | null> {
    let runs = this.runs.get(organizationId);
    if (!runs) {
      runs = new GroupCommit((mails) => this.unsubscribeTogether(organizationId, mails), {
        maxWeight: RUN_UNSUBSCRIBES,
        onIdle: () => this.runs.delete(organizationId),
      });
      this.runs.set(organizationId, runs);
    }
    return runs;
  }

  /**
   * An organization's run of unsubscribes: each link's subscriber read locked (null: none, it was
   * deleted) and, when not unsubscribed yet, unsubscribed by the first of its links in the run, as one
   * after another would.
   */
  private async unsubscribeTogether(organizationId: number, mails: LinkMail[]): Promise<Array<string | null>> {
    const now = this.clock.now();
    await ensureStatusCountRows(this.knex, organizationId);
    return transactionWithRetry(this.knex, async (trx) => {
      const ids = [...new Set(mails.map((m) => m.subscriberId))].sort((a, b) => a - b);
      const found = new Map((await this.writer.locked(trx, organizationId, ids)).map((s) => [s.id, s]));
      const messages = await this.existingMessages(trx, organizationId, mails);
      const events: MailEvent[] = [];
      // A link of a message deleted since still unsubscribes; there is no message left to count it on.
      const withoutMessage: number[] = [];
      const leaving = new Set<number>();
      for (const { messageId, subscriberId } of mails) {
        const current = found.get(subscriberId);
        if (!current || current.status === 'unsubscribed' || leaving.has(subscriberId)) continue;
        leaving.add(subscriberId);
        if (!messages.has(messageId)) {
          withoutMessage.push(subscriberId);
          continue;
        }
        events.push({
          type: 'unsubscribed',
          organizationId,
          messageId,
          subscriberId,
          occurredAt: now,
          source: { kind: 'link' },
          email: current.email,
        });
      }
      if (events.length) await this.ledger.apply(trx, now, events);
      for (const id of withoutMessage.sort((a, b) => a - b))
        await this.writer.setStatusWithin(trx, organizationId, id, 'unsubscribed', {
          unsubscribe_reason: 'unsubscribe link',
        });
      return mails.map((m) => found.get(m.subscriberId)?.email ?? null);
    });
  }

  /** The run's messages that still exist. */
  private async existingMessages(
    trx: Knex.Transaction,
    organizationId: number,
    mails: LinkMail[],
  ): Promise<Set<number>> {
    const ids = [...new Set(mails.map((m) => m.messageId))];
    const rows: Array<{ id: unknown }> = await trx('messages')
      .where({ organization_id: organizationId })
      .whereIn('id', ids)
      .select('id');
    return new Set(rows.map((r) => Number(r.id)));
  }
}
