import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppConfig, Clock, JobQueues, Mailer, SERVICES } from '@switchboard/core';
import { LinkSigner } from '../shared/link-signer';
import { escapeHtml } from '../shared/html';
import { CHANGELOG_CONFIRM_PATH } from '../shared/paths';
import { CHANGELOG_CONFIRMATION_JOB } from './jobs';
import { subscriptionOfLink } from './subscription-links';
import { isConfirmed } from './addresses';
import { noReplyAddress } from '../shared/mail-ids';

const PURPOSE = 'changelog-confirm';
/** How long before the same address may be asked again (unless it unsubscribed since). */
export const ASK_AGAIN_AFTER_MS = 24 * 3_600_000;

/**
 * E-mail consent of changelog subscriptions (issue 24): an organization names an address, the address
 * confirms it wants the notices, by a link mailed to it; until then (and after an unsubscribe, until it
 * confirms again) none of its subscriptions in the organization is sent anything (campaign 1.18: the
 * consent is the address's, `changelog_addresses`).
 */
@injectable()
export class ChangelogConsent {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Config) private readonly config: AppConfig,
    @inject(SERVICES.Queues) private readonly queues: JobQueues,
    @inject(SERVICES.Mailer) private readonly mailer: Mailer,
    @inject(LinkSigner) private readonly signer: LinkSigner,
  ) {}

  /**
   * Queues the confirmation mail to the subscription's e-mail, at most once a day per address of the
   * organization (whatever its webhook urls: each url asked again until session 36), and once after each
   * unsubscribe (which only the address's owner can do): subscribing a stranger again and again mails them
   * once a day at most.
   */
  async ask(subscriptionId: number, addressId: number): Promise<void> {
    const now = this.clock.now();
    const dayBefore = new Date(now.getTime() - ASK_AGAIN_AFTER_MS);
    const due = await this.knex('changelog_addresses')
      .where({ id: addressId })
      .andWhere((q) =>
        q
          .whereNull('asked_at')
          .orWhere('asked_at', '<', dayBefore)
          .orWhere((u) =>
            u.whereNotNull('unsubscribed_at').andWhere('unsubscribed_at', '>', this.knex.ref('asked_at')),
          ),
      )
      .update({ asked_at: now });
    if (!due) return;
    await this.queues
      .get(CHANGELOG_CONFIRMATION_JOB)
      .add({ subscriptionId }, { jobId: `changelog-confirm-${subscriptionId}`, retries: 5, backoffMs: 5000 });
  }

  async send(subscriptionId: number): Promise<void> {
    const row = await this.knex('changelog_subscriptions').where({ id: subscriptionId }).first('email');
    if (!row) return;
    const token = await this.signer.sign(PURPOSE, [subscriptionId]);
    const link = `${this.config.publicUrl}${CHANGELOG_CONFIRM_PATH}?token=${encodeURIComponent(token)}`;
    await this.mailer.send({
      from: noReplyAddress(this.config.publicUrl),
      to: String(row.email),
      subject: 'Please confirm: API change notices',
      text: `Hello,\n\nsomeone asked that this address receive notices of API changes. To receive them, confirm by opening this link:\n${link}\n\nIf you did not ask for it, ignore this mail: nothing will be sent.\n`,
      html: `<p>Hello,</p><p>someone asked that this address receive notices of API changes. <a href="${escapeHtml(link)}">Confirm</a> to receive them.</p><p>If you did not ask for it, ignore this mail: nothing will be sent.</p>`,
    });
  }

  async describe(token: string): Promise<{ email: string; confirmed: boolean }> {
    const { email, address } = await this.subscription(token);
    return { email, confirmed: isConfirmed(address) };
  }

  /** Confirms the address: notices from now on to each of its subscriptions, an earlier unsubscribe lifted. */
  async confirm(token: string): Promise<{ email: string }> {
    const { email, address } = await this.subscription(token);
    await this.knex('changelog_addresses')
      .where({ id: address.id })
      .update({ confirmed_at: this.clock.now(), unsubscribed_at: null });
    return { email };
  }

  private subscription(token: string) {
    return subscriptionOfLink(this.knex, this.signer, PURPOSE, token);
  }
}
