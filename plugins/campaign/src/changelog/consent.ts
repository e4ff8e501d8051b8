import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  AppConfig,
  Clock,
  isRecipientRefused,
  JobQueues,
  Mailer,
  queueEachSoon,
  SERVICES,
  toInt,
  toDate,
  toNullableInt,
} from '@switchboard/core';
import type { Logger } from '@switchboard/core';
import { LinkSigner } from '../shared/link-signer';
import { escapeHtml } from '../shared/html';
import { CHANGELOG_CONFIRM_PATH } from '../shared/paths';
import { CHANGELOG_CONFIRMATION_JOB } from './jobs';
import { subscriptionOfLink } from './subscription-links';
import { addressOf, isConfirmed } from './addresses';
import { noReplyAddress } from '../shared/mail-ids';

const PURPOSE = 'changelog-confirm';
/** How long before the same address may be asked again (unless it unsubscribed since). */
export const ASK_AGAIN_AFTER_MS = 24 * 3_600_000;
/** A queued confirmation job still waiting or retrying (5 tries from 5 s apart) is left alone this long. */
export const ASK_REQUEUE_AFTER_MS = 3 * 60_000;
/** Asks the sweep reads at a time: more wait for its next minute. */
const SWEEP_BATCH = 100;

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
    @inject(SERVICES.Logger) private readonly logger: Logger,
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
      .update({
        asked_at: now,
        ask_subscription_id: subscriptionId,
        ask_due_at: new Date(now.getTime() + ASK_REQUEUE_AFTER_MS),
      });
    if (!due) return;
    await this.queue([subscriptionId]);
  }

  /**
   * Confirmation mails whose job was lost (Redis away or emptied, a process stopped, the relay down past the
   * job's tries): queued again every few minutes, for a day after the ask (session 36: an address asked then
   * waited a day for the next ask). A job still waiting has the same id, so queueing it again changes nothing.
   */
  async sweep(now: Date): Promise<number> {
    await this.knex('changelog_addresses')
      .whereNotNull('ask_due_at')
      .andWhere('asked_at', '<', new Date(now.getTime() - ASK_AGAIN_AFTER_MS))
      .update({ ask_due_at: null });
    const due: Array<Record<string, unknown>> = await this.knex('changelog_addresses')
      .where('ask_due_at', '<=', now)
      .orderBy('ask_due_at')
      .limit(SWEEP_BATCH)
      .select('id', 'ask_subscription_id');
    if (!due.length) return 0;
    await this.knex('changelog_addresses')
      .whereIn(
        'id',
        due.map((r) => toInt(r.id)),
      )
      .update({ ask_due_at: new Date(now.getTime() + ASK_REQUEUE_AFTER_MS) });
    await this.queue(due.map((r) => toInt(r.ask_subscription_id)));
    return due.length;
  }

  /** Queued, or left to the sweep while Redis does not take them: a request is never held by a Redis away. */
  private async queue(subscriptionIds: number[]): Promise<void> {
    const queue = this.queues.get(CHANGELOG_CONFIRMATION_JOB);
    const add = (subscriptionId: number) =>
      queue.add({ subscriptionId }, { jobId: `changelog-confirm-${subscriptionId}`, retries: 5, backoffMs: 5000 });
    await queueEachSoon(subscriptionIds, add, this.logger, 'changelog confirmation mail');
  }

  /**
   * The confirmation mail, while it is still asked for: a job run again after its mail was written (a
   * stalled job, or the sweep's when the first was late) and an address that confirmed meanwhile send
   * nothing. A job queued by 1.17 (no ask recorded: its address asked within the day) is still asked. Once
   * written, or refused by the relay for good (an unknown mailbox: asked every 3 minutes for a day, it would
   * harm the relay's name; a refused login or a relay away is tried again), the sweep leaves it.
   */
  async send(subscriptionId: number): Promise<void> {
    const subscription = await this.knex('changelog_subscriptions')
      .where({ id: subscriptionId })
      .first('id', 'organization_id', 'email', 'address_id');
    const forget = () =>
      this.knex('changelog_addresses').where({ ask_subscription_id: subscriptionId }).update({ ask_due_at: null });
    if (!subscription) return void (await forget());
    const address = await addressOf(this.knex, subscription);
    const dayBefore = new Date(this.clock.now().getTime() - ASK_AGAIN_AFTER_MS);
    const asked =
      toNullableInt(address.ask_subscription_id) === null
        ? address.asked_at !== null && (toDate(address.asked_at) ?? 0) >= dayBefore
        : toNullableInt(address.ask_subscription_id) === subscriptionId && address.ask_due_at !== null;
    if (!asked || isConfirmed(address)) return;
    try {
      await this.mail(subscriptionId, String(subscription.email));
    } catch (err) {
      if (!isRecipientRefused(err)) throw err;
      this.logger.warn(
        { err: (err as Error).message, subscriptionId },
        'changelog confirmation mail refused for good: asked again by a subscribe a day on',
      );
    }
    await forget();
  }

  private async mail(subscriptionId: number, email: string): Promise<void> {
    const token = await this.signer.sign(PURPOSE, [subscriptionId]);
    const link = `${this.config.publicUrl}${CHANGELOG_CONFIRM_PATH}?token=${encodeURIComponent(token)}`;
    await this.mailer.send({
      from: noReplyAddress(this.config.publicUrl),
      to: email,
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
      .update({ confirmed_at: this.clock.now(), unsubscribed_at: null, ask_due_at: null });
    return { email };
  }

  private subscription(token: string) {
    return subscriptionOfLink(this.knex, this.signer, PURPOSE, token);
  }
}
