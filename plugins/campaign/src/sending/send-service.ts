import { inject, injectable } from 'tsyringe';
import { oneOffMailId } from '../shared/mail-ids';
import type { Knex } from 'knex';
import {
  Clock,
  JobQueues,
  Mailer,
  ownedRow,
  SERVICES,
  toInt,
  transactionWithRetry,
  validationError,
} from '@switchboard/core';
import type { AppConfig, Logger } from '@switchboard/core';
import { Composer } from './composer';
import { CONTENT_COLUMNS, contentOf } from './message-content';
import { normalizeEmail } from '../shared/email';
import { assertListsOwned } from '../audience/lists';
import { SendStore, SendRow } from './send-store';
import { SenderIdentities } from './sender-identity';
import { TEST_RECIPIENT, UnsubscribeLinks } from './unsubscribe-links';
import { rangeJobId, SEND_RANGE_JOB } from './send-job';
import type { Send, SendRequest } from './schemas';
import { parseMeta } from './send-worker';

const MESSAGE_COLUMNS = ['status', ...CONTENT_COLUMNS];

/** The merge values of a test mail to an address that is no subscriber's (docs/decisions.md, Sending). */
const SAMPLE_RECIPIENT = {
  id: TEST_RECIPIENT,
  first_name: 'Jane',
  last_name: 'Doe',
  company_name: 'Example Company',
  phone: '+1 555 0100',
  job_title: 'Reader',
  meta: {},
};

/**
 * Send, test and cancel (docs/decisions.md, Sending): a draft or a cancelled message can be sent; a
 * pending or active one is being sent; a sent one is done (schedules send again).
 */
@injectable()
export class SendService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Queues) private readonly queues: JobQueues,
    @inject(SERVICES.Mailer) private readonly mailer: Mailer,
    @inject(SendStore) private readonly store: SendStore,
    @inject(SenderIdentities) private readonly senders: SenderIdentities,
    @inject(UnsubscribeLinks) private readonly links: UnsubscribeLinks,
    @inject(SERVICES.Logger) private readonly logger: Logger,
    @inject(SERVICES.Config) private readonly config: AppConfig,
  ) {}

  async send(orgId: number, messageId: number, request: SendRequest): Promise<Send> {
    const message = await ownedRow(this.knex, 'messages', orgId, messageId, MESSAGE_COLUMNS, 'Message');
    const testMode = request.test_mode ?? false;
    if (!testMode) this.assertSendable(messageId, String(message.status));
    const scheduledAt = request.scheduled_at ? new Date(request.scheduled_at) : null;
    // A time the format allows but no clock shows (a leap second, 23:59:60) would be stored as no time at all.
    if (scheduledAt && Number.isNaN(scheduledAt.getTime()))
      throw validationError('scheduled_at', 'format', 'scheduled_at must be a date-time a clock shows');
    if (scheduledAt && scheduledAt.getTime() <= this.clock.now().getTime())
      throw validationError('scheduled_at', 'future', 'scheduled_at must be in the future');
    // 9999-12-31T23:59-05:00 is year 10000 in UTC, which MariaDB's DATETIME cannot hold (a 500 on both backends).
    if (scheduledAt && scheduledAt.getUTCFullYear() > 9999)
      throw validationError('scheduled_at', 'maximum', 'scheduled_at must be before the year 10000 in UTC');
    await assertListsOwned(this.knex, orgId, request.list_ids);
    await this.senders.of(orgId, contentOf(message));

    const status = scheduledAt ? 'pending' : 'active';
    const sendId = await transactionWithRetry(this.knex, async (trx) => {
      if (!testMode) {
        const moved = await trx('messages')
          .where({ organization_id: orgId, id: messageId })
          .whereIn('status', ['draft', 'cancelled'])
          .update({ status, updated_at: this.clock.now() });
        if (!moved) this.assertSendable(messageId, 'changed');
      }
      const id = await this.store.create(trx, {
        organizationId: orgId,
        messageId,
        status,
        listIds: request.list_ids,
        testMode,
        scheduledAt,
      });
      if (status === 'active') await this.store.addRecipients(trx, (await this.store.get(id, trx))!);
      return id;
    });
    // Queued after the commit; should the queue be away, the watchdog queues the send within a minute.
    if (status === 'active')
      await this.enqueue(sendId).catch((err) => this.logger.error({ err, sendId }, 'queuing a send failed'));
    const send = (await this.store.view(sendId))!;
    // A pending send has no recipients yet: it counts those the lists have now.
    return status === 'pending' ? { ...send, recipients: await this.store.countAudience(request.list_ids) } : send;
  }

  /** Starts a pending send whose time has come (the watchdog); false when another process did. */
  async start(send: SendRow): Promise<boolean> {
    const started = await transactionWithRetry(this.knex, async (trx) => {
      const now = this.clock.now();
      const moved = await trx('message_sends')
        .where({ id: send.id, status: 'pending' })
        .update({ status: 'active', started_at: now, updated_at: now });
      if (!moved) return false;
      if (!send.test_mode)
        await trx('messages')
          .where({ id: send.message_id, status: 'pending' })
          .update({ status: 'active', updated_at: now });
      await this.store.addRecipients(trx, { ...send, status: 'active' });
      return true;
    });
    if (started)
      await this.enqueue(send.id).catch((err) => this.logger.error({ err, sendId: send.id }, 'queuing a send failed'));
    return started;
  }

  /** Queues every range of the send's queued recipients (a range already queued is not queued again). */
  async enqueue(sendId: number): Promise<void> {
    const queue = this.queues.get(SEND_RANGE_JOB);
    for await (const range of this.store.queuedRanges(sendId)) {
      const job = { sendId, ...range };
      await queue.add(job, { jobId: rangeJobId(job) });
    }
    // No recipient at all: finished now.
    const send = await this.store.get(sendId);
    if (send) await this.store.finishIfDone(send);
  }

  /** Resumes a send paused for its failures: its queued recipients are sent again. */
  async resume(orgId: number, messageId: number): Promise<void> {
    await ownedRow(this.knex, 'messages', orgId, messageId, ['id'], 'Message');
    const paused = await this.knex('message_sends').where({ message_id: messageId, status: 'paused' }).first('id');
    if (!paused) throw validationError('status', 'paused_only', `Message ${messageId} has no paused send to resume`);
    await this.knex('message_sends')
      .where({ id: paused.id, status: 'paused' })
      // A wait for the relay starts again from the resume, if the relay is still away.
      .update({
        status: 'active',
        pause_reason: null,
        waiting_since: null,
        waiting_reason: null,
        updated_at: this.clock.now(),
      });
    // As a new send's: should the queue be away, the watchdog queues it within a minute.
    const sendId = toInt(paused.id);
    await this.enqueue(sendId).catch((err) => this.logger.error({ err, sendId }, 'queuing a send failed'));
  }

  async cancel(orgId: number, messageId: number): Promise<void> {
    const message = await ownedRow(this.knex, 'messages', orgId, messageId, ['status'], 'Message');
    const status = String(message.status);
    if (status !== 'pending' && status !== 'active') {
      throw validationError(
        'status',
        'not_sending',
        `Message ${messageId} is ${status}; only a pending or active message can be cancelled`,
      );
    }
    await transactionWithRetry(this.knex, async (trx) => {
      const now = this.clock.now();
      await trx('messages')
        .where({ id: messageId })
        .whereIn('status', ['pending', 'active'])
        .update({ status: 'cancelled', updated_at: now });
      await trx('message_sends')
        .where({ message_id: messageId, test_mode: false })
        .whereIn('status', ['pending', 'active', 'paused'])
        .update({ status: 'cancelled', finished_at: now, updated_at: now });
    });
  }

  /**
   * One mail to `email` now, rendered for the organization's subscriber with that address if there is
   * one (else empty merge values), its subject marked as a test. No counter or status changes.
   */
  async test(orgId: number, messageId: number, email: string): Promise<{ email: string; message_id_header: string }> {
    const message = await ownedRow(this.knex, 'messages', orgId, messageId, MESSAGE_COLUMNS, 'Message');
    const content = contentOf(message);
    const composer = new Composer(content, await this.senders.of(orgId, content), { subjectPrefix: '[Test] ' });
    const subscriber = await this.knex('subscribers')
      .where({ organization_id: orgId, email: normalizeEmail(email) })
      .first('id', 'email', 'first_name', 'last_name', 'company_name', 'phone', 'job_title', 'meta_data');
    const recipient = subscriber
      ? { ...subscriber, id: toInt(subscriber.id), email, meta: parseMeta(subscriber.meta_data) }
      : { ...SAMPLE_RECIPIENT, email };
    // A test mail's unsubscribe link works and unsubscribes nobody, whoever it went to.
    const unsubscribe = await this.links.link(orgId, messageId, TEST_RECIPIENT);
    const mail = composer.compose(
      recipient,
      { unsubscribe },
      oneOffMailId(this.config.publicUrl, 'test', messageId, this.clock.now()),
    );
    try {
      await this.mailer.send(mail);
    } catch (err) {
      // The mail server's answer, as the caller's problem to see (a refused address, a server away).
      throw validationError('email', 'delivery', `The test mail was not accepted: ${(err as Error).message}`);
    }
    return { email, message_id_header: mail.messageId! };
  }

  private assertSendable(messageId: number, status: string): void {
    if (status === 'draft' || status === 'cancelled') return;
    const why =
      status === 'sent'
        ? 'it was sent already (a schedule sends a message again)'
        : status === 'changed'
          ? 'it changed meanwhile'
          : `it is ${status}`;
    throw validationError('status', 'sendable', `Message ${messageId} cannot be sent: ${why}`);
  }
}
