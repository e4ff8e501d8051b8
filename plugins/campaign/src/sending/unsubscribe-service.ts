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
   * Unsubscribes arriving together are applied together, one transaction for all (core GroupCommit):
   * mailbox providers post them in bursts from a few addresses (issue 24: 5,000 in a minute).
   */
  private readonly runs = new GroupCommit<LinkMail, string | null>((mails) => this.unsubscribeTogether(mails), {
    maxWeight: RUN_UNSUBSCRIBES,
  });

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
    const email = await this.runs.submit(ids);
    if (email === null) throw invalid();
    return { email };
  }

  /**
   * A run's unsubscribes: each link's subscriber read locked (null: none, it was deleted) and, when not
   * unsubscribed yet, unsubscribed by the first of its links in the run, as one after another would.
   */
  private async unsubscribeTogether(mails: LinkMail[]): Promise<Array<string | null>> {
    const now = this.clock.now();
    const organizations = [...new Set(mails.map((m) => m.organizationId))].sort((a, b) => a - b);
    for (const organizationId of organizations) await ensureStatusCountRows(this.knex, organizationId);
    const key = (organizationId: number, subscriberId: number) => `${organizationId}.${subscriberId}`;
    return transactionWithRetry(this.knex, async (trx) => {
      const found = new Map<string, { email: string; status: string }>();
      for (const organizationId of organizations) {
        const ids = [...new Set(mails.filter((m) => m.organizationId === organizationId).map((m) => m.subscriberId))];
        for (const s of await this.writer.locked(
          trx,
          organizationId,
          ids.sort((a, b) => a - b),
        ))
          found.set(key(organizationId, s.id), { email: s.email, status: s.status });
      }
      const events: MailEvent[] = [];
      const leaving = new Set<string>();
      for (const { organizationId, messageId, subscriberId } of mails) {
        const current = found.get(key(organizationId, subscriberId));
        if (!current || current.status === 'unsubscribed' || leaving.has(key(organizationId, subscriberId))) continue;
        leaving.add(key(organizationId, subscriberId));
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
      return mails.map((m) => found.get(key(m.organizationId, m.subscriberId))?.email ?? null);
    });
  }
}
