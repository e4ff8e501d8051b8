import { inject, injectable } from 'tsyringe';
import { mailIdDomain } from '../shared/mail-ids';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import {
  AppConfig,
  isHandoverUnavailable,
  isPermanentMailError,
  isRelayLoginRefused,
  RepeatedWarning,
  Mailer,
  parseJson,
  SchemaGate,
  SERVICES,
  toInt,
  whileDatabaseAway,
} from '@switchboard/core';
import type { OutgoingIds } from '@switchboard/provider-kit';
import { ProviderAdapters } from '../events';
import { Composer, Recipient } from './composer';
import { CONTENT_COLUMNS, contentOf, SendableMessage } from './message-content';
import { TrackingLinks } from './tracking-links';
import { Outcome, SendRow, SendStore } from './send-store';
import { SenderIdentities } from './sender-identity';
import { UnsubscribeLinks } from './unsubscribe-links';
import type { SendRangeJob } from './send-job';

const RECIPIENT_COLUMNS = [
  'id',
  'email',
  'status',
  'first_name',
  'last_name',
  'company_name',
  'phone',
  'job_title',
  'meta_data',
];

/** How often a worker renews its claim while handing its mails over (well inside the 2-minute lease). */
const RENEW_EVERY_MS = 30_000;

/**
 * How long a claim waits for a database that went away (its fresh reads, its record) before the job gives
 * up: inside the 2-minute lease, past which the watchdog gives the claim to another worker.
 */
const RECORD_WITHIN_MS = 80_000;

/** Mails of one range handed to the mailer at once. */
const DELIVERIES_AT_ONCE = 5;
/**
 * How old the claim's subscriber rows (and the send's status) may be when a mail is composed: older, they
 * are read again. A slow or throttled relay takes seconds over a claim of 50, and someone who unsubscribed
 * or was deleted meanwhile was still mailed, as was the rest of a claim after a cancel (session 26); at
 * full speed a claim is done before they age.
 */
const ROWS_FRESH_MS = 1_000;

/** Composers of the sends this process worked on lately (a message being sent cannot change). */
const COMPOSERS_KEPT = 20;

/**
 * Sends one range of a send's recipients: claims them a few at a time, checks each is still active
 * (an unsubscribe or a bounce during the send is skipped), composes and hands the mail to SMTP, and
 * records the outcome. A cancel stops it before the next claim.
 */
@injectable()
export class SendWorker {
  private readonly composers = new Map<number, Promise<{ composer: Composer; message: SendableMessage }>>();
  /** The right side of every Message-ID: PUBLIC_URL's host. */
  private readonly mailDomain: string;
  /** Told once a minute while mail cannot be handed over. */
  private readonly handoverAway = new RepeatedWarning(60_000);

  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Mailer) private readonly mailer: Mailer,
    @inject(SERVICES.Config) private readonly config: AppConfig,
    @inject(SendStore) private readonly store: SendStore,
    @inject(SenderIdentities) private readonly senders: SenderIdentities,
    @inject(UnsubscribeLinks) private readonly links: UnsubscribeLinks,
    @inject(TrackingLinks) private readonly tracking: TrackingLinks,
    @inject(ProviderAdapters) private readonly providers: ProviderAdapters,
    @inject(SERVICES.Logger) private readonly logger: Logger,
    @inject(SERVICES.SchemaGate) private readonly schema: SchemaGate,
  ) {
    this.mailDomain = mailIdDomain(config.publicUrl);
  }

  async run(job: SendRangeJob): Promise<void> {
    const send = await this.store.get(job.sendId);
    if (!send || send.status !== 'active') return;
    let built: { composer: Composer; message: SendableMessage };
    try {
      built = await this.composerOf(send);
    } catch (err) {
      // No mail can be made (the sender profile was deleted, say): retrying every few seconds will not help.
      await this.store.pause(send.id, `The message cannot be composed: ${(err as Error).message}`);
      return;
    }
    const { composer, message } = built;
    for (;;) {
      // A schema rolled back under this worker: its record would fail after the mail went out.
      await this.schema.open();
      if ((await this.store.get(send.id))?.status !== 'active') return;
      const claim = await this.store.claim(send.id, job.from, job.to);
      if (!claim) break;
      const { ids } = claim;
      // The send was active just above; read again once a second old, cancelled or paused meanwhile, the
      // claim's mails not composed yet stay queued.
      const rows = freshRows(
        this.recipientRows(ids).then((byId) => ({ byId, active: true })),
        // Mails of the claim may be with SMTP already: a database away for a moment is waited for here too.
        () =>
          whileDatabaseAway(
            async () => ({
              byId: await this.recipientRows(ids),
              active: (await this.store.get(send.id))?.status === 'active',
            }),
            RECORD_WITHIN_MS,
          ),
      );
      // A few at a time: the SMTP pool sends on its connections only, and a mail waiting in its queue is
      // memory held (all 50 at once took the worker's peak RSS from 130 to 220 MB).
      const outcomes: Outcome[] = new Array(ids.length);
      let next = 0;
      const deliverNext = async () => {
        for (let i = next++; i < ids.length; i = next++) {
          const { byId, active } = await rows();
          outcomes[i] = active
            ? await this.deliver(send, composer, message, ids[i], byId.get(ids[i]))
            : { id: ids[i], state: 'queued' };
        }
      };
      // A throttled pool may take longer than the lease: the claim is kept alive meanwhile.
      const renewal = setInterval(() => void this.store.renew(send.id, claim).catch(() => undefined), RENEW_EVERY_MS);
      try {
        await Promise.all(Array.from({ length: DELIVERIES_AT_ONCE }, deliverNext));
        // SMTP took these mails: a database away for a moment delays their record, never sends them again
        // (the claim, still renewed, stays ours; past the lease the watchdog's retry is at least once).
        // The renewal above goes on meanwhile: at most 30 s old when the database went, it keeps the
        // 2-minute lease for these 80 s.
        await whileDatabaseAway(
          () => this.store.record(send, claim, outcomes),
          RECORD_WITHIN_MS,
          () => this.logger.warn({ sendId: send.id }, 'database away: the claim is recorded once it is back'),
        );
      } finally {
        clearInterval(renewal);
      }
      const notTried = outcomes.find((o) => o.notTried);
      if (notTried?.needsOperator) {
        // A login refused passes no mail until someone fixes it: paused, saying why, recipients kept.
        await this.store.pause(send.id, `mail cannot be handed over: ${notTried.error}`);
        return;
      }
      if (notTried) {
        // Every next mail would fail alike: the job ends, and the watchdog queues the send again once it
        // recorded nothing for a while, each range's job probing with one claim until mail can be handed over.
        this.handoverAway.warn(
          this.logger,
          { sendId: send.id },
          `mail cannot be handed over (${notTried.error}): the send waits, its recipients queued, no try spent`,
        );
        return;
      }
    }
    await this.store.finishIfDone(send);
  }

  /** The claim's subscribers as stored now (a deleted one is missing). */
  private async recipientRows(ids: number[]): Promise<Map<number, Record<string, unknown>>> {
    const rows = (await this.knex('subscribers').whereIn('id', ids).select(RECIPIENT_COLUMNS)) as Array<
      Record<string, unknown>
    >;
    return new Map(rows.map((r) => [toInt(r.id), r]));
  }

  private async deliver(
    send: SendRow,
    composer: Composer,
    message: SendableMessage,
    id: number,
    row: Record<string, unknown> | undefined,
  ): Promise<Outcome> {
    // Deleted, unsubscribed or bounced since the send started: nothing more goes to them.
    if (!row || row.status !== 'active') return { id, state: 'skipped' };
    try {
      const recipient: Recipient = {
        id,
        email: String(row.email),
        first_name: row.first_name as string | null,
        last_name: row.last_name as string | null,
        company_name: row.company_name as string | null,
        phone: row.phone as string | null,
        job_title: row.job_title as string | null,
        meta: parseMeta(row.meta_data),
      };
      const mailId = `${send.id}.${id}.${send.message_id}@${this.mailDomain}`;
      const tracking = await this.tracking.forMail(
        { organizationId: send.organization_id, sendId: send.id, subscriberId: id },
        { opens: message.track_opens, clicks: message.track_clicks },
      );
      const mail = composer.compose(
        recipient,
        { unsubscribe: await this.links.link(send.organization_id, send.message_id, id), tracking },
        mailId,
      );
      if (send.test_mode) return { id, state: 'sent', mailId };
      try {
        const { relayId } = await this.mailer.send(mail);
        return { id, state: 'sent', mailId, email: recipient.email, reached: true, ...(relayId ? { relayId } : {}) };
      } catch (err) {
        const error = String((err as Error).message ?? err).slice(0, 250);
        // Not handed over at all (relay out of reach, outbox disk full): queued again, no try spent.
        if (isHandoverUnavailable(err))
          return {
            id,
            state: 'queued',
            error,
            notTried: true,
            ...(isRelayLoginRefused(err) && { needsOperator: true }),
          };
        // A refusal for good fails the recipient; anything else is tried again later (the watchdog).
        return { id, state: isPermanentMailError(err) ? 'failed' : 'queued', error, reached: true };
      }
    } catch (err) {
      // This recipient's mail cannot be made: it fails, the others go on.
      return { id, state: 'failed', error: `cannot compose: ${String((err as Error).message ?? err).slice(0, 230)}` };
    }
  }

  private composerOf(send: SendRow): Promise<{ composer: Composer; message: SendableMessage }> {
    let composer = this.composers.get(send.id);
    if (!composer) {
      composer = this.buildComposer(send);
      composer.catch(() => this.composers.delete(send.id));
      this.composers.set(send.id, composer);
      if (this.composers.size > COMPOSERS_KEPT) this.composers.delete(this.composers.keys().next().value!);
    }
    return composer;
  }

  private async buildComposer(send: SendRow): Promise<{ composer: Composer; message: SendableMessage }> {
    const message = contentOf(await this.knex('messages').where({ id: send.message_id }).first(CONTENT_COLUMNS));
    const sender = await this.senders.of(send.organization_id, message);
    const providerHeaders = (ids: OutgoingIds) => this.providers.outgoingHeaders(ids);
    return { composer: new Composer(message, sender, { providerHeaders }), message };
  }
}

export function parseMeta(value: unknown): Record<string, unknown> {
  const parsed = parseJson<unknown>(value, {});
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
}

/**
 * `first`, then what `again` reads once the last read is older than ROWS_FRESH_MS; the deliveries running
 * at once share one read.
 */
function freshRows<T>(first: Promise<T>, again: () => Promise<T>): () => Promise<T> {
  let current = first;
  let readAt = Date.now();
  return () => {
    if (Date.now() - readAt >= ROWS_FRESH_MS) {
      readAt = Date.now();
      current = again();
    }
    return current;
  };
}
