import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppConfig, AppError, isRecipientRefused, Mailer, SERVICES } from '@switchboard/core';
import type { Logger } from '@switchboard/core';
import { LinkSigner } from '../../shared/link-signer';
import { CONFIRM_PATH } from '../../shared/paths';
import { escapeHtml } from '../../shared/html';
import { SubscriberWriter } from '../subscribers';
import { SenderProfilesService } from '../../content/sender-profiles';
import type { ConfirmationJob } from '../../shared/confirmation-job';
import { noReplyAddress, oneOffMailId } from '../../shared/mail-ids';

/** Double opt-in: a queued mail with a signed link, and the confirmation of that link. */
@injectable()
export class ConfirmationMails {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Mailer) private readonly mailer: Mailer,
    @inject(SERVICES.Config) private readonly config: AppConfig,
    @inject(LinkSigner) private readonly signer: LinkSigner,
    @inject(SubscriberWriter) private readonly writer: SubscriberWriter,
    @inject(SenderProfilesService) private readonly senders: SenderProfilesService,
    @inject(SERVICES.Logger) private readonly logger: Logger,
  ) {}

  async send(job: ConfirmationJob): Promise<void> {
    const subscriber = await this.knex('subscribers')
      .where({ id: job.subscriberId, organization_id: job.organizationId, status: 'unconfirmed' })
      .first('email', 'first_name');
    if (!subscriber) return this.done(job.subscriberId);
    const sender = await this.senders.defaultFor(job.organizationId);
    const token = await this.signer.sign('confirm', [job.organizationId, job.subscriberId]);
    const link = `${this.config.publicUrl}${CONFIRM_PATH}?token=${encodeURIComponent(token)}`;
    // The name as a field of its own: the mailer quotes or encodes it (a name with quotes or commas is text).
    const from = sender
      ? { name: String(sender.from_name), address: String(sender.from_email) }
      : noReplyAddress(this.config.publicUrl);
    const mail = this.mailer.send({
      from,
      messageId: `<${oneOffMailId(this.config.publicUrl, 'confirm', job.subscriberId, new Date())}>`,
      to: subscriber.email,
      subject: 'Please confirm your subscription',
      text: `Hello${subscriber.first_name ? ` ${subscriber.first_name}` : ''},\n\nplease confirm your subscription by opening this link:\n${link}\n\nIf you did not ask for it, ignore this mail.\n`,
      html: `<p>Hello${subscriber.first_name ? ` ${escapeHtml(subscriber.first_name)}` : ''},</p><p>please <a href="${link}">confirm your subscription</a>.</p><p>If you did not ask for it, ignore this mail.</p>`,
    });
    // A mailbox the relay refuses for good is not asked again (the sweep asked it every 2 minutes for a day).
    await mail.catch((err: unknown) => {
      if (!isRecipientRefused(err)) throw err;
      this.logger.warn(
        { err: (err as Error).message, subscriberId: job.subscriberId },
        'confirmation mail refused for good by the relay: not sent again',
      );
    });
    await this.done(job.subscriberId);
  }

  /** Sent, or no longer wanted: the sweep forgets it (a crash before this sends it once more). */
  private async done(subscriberId: number): Promise<void> {
    await this.knex('confirmation_mails_due').where({ subscriber_id: subscriberId }).delete();
  }

  /** The address a confirmation link is for, and its status now; a link not valid is a 404. */
  async describe(
    token: string,
  ): Promise<{ organizationId: number; subscriberId: number; email: string; status: string }> {
    const ids = await this.signer.verify('confirm', token);
    if (!ids || ids.length !== 2) throw new AppError('RESOURCE_NOT_FOUND', 'This confirmation link is not valid');
    const [organizationId, subscriberId] = ids;
    const row = await this.knex('subscribers')
      .where({ id: subscriberId, organization_id: organizationId })
      .first('email', 'status');
    if (!row) throw new AppError('RESOURCE_NOT_FOUND', 'This subscription no longer exists');
    return { organizationId, subscriberId, email: String(row.email), status: String(row.status) };
  }

  /**
   * Confirms the link's subscriber, once; a subscriber confirmed since, or unsubscribed or bounced since,
   * stays as it is. Returns the status it has now.
   */
  async confirm(token: string): Promise<{ email: string; status: string }> {
    const { organizationId, subscriberId, email, status } = await this.describe(token);
    if (status !== 'unconfirmed') return { email, status };
    return { email, status: await this.writer.moveIf(organizationId, subscriberId, 'unconfirmed', 'active') };
  }
}
