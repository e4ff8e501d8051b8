import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  byPrimaryKey,
  lockedOnMysql,
  Clock,
  insertedId,
  parseJson,
  SERVICES,
  toBool,
  toDate,
  toInt,
  toIso,
  transactionWithRetry,
} from '@switchboard/core';
import type { Send } from './schemas';
import { SENDING_OPTIONS, SendingOptions } from './options';
import { addDailyMetrics, dayOf, METRIC } from '../daily-figures';
import { WebhookOutbox } from '../webhooks';
import { MailEventLedger } from '../mail-events';

/**
 * Tries of a claim's record against deadlocks: its mails are with SMTP already, and a record given up
 * leaves the claim to the watchdog, which mails it again once the lease is over.
 */
const RECORD_ATTEMPTS = 20;
/**
 * A send's recipients among `ids`, read or written by key alone (byPrimaryKey; the bounds keep MariaDB
 * from reading all the send's rows when `ids` are all of them): sends at once never lock each other's rows,
 * nor a claim another claim's.
 */
const keyedRecipients = (db: Knex | Knex.Transaction, sendId: number, ids: number[]) => {
  const rows = db(db.raw(byPrimaryKey(db, 'send_recipients'))).where({ send_id: sendId });
  // No ids (a claim another worker emptied): knex's empty IN matches nothing.
  if (ids.length) rows.whereBetween('subscriber_id', [Math.min(...ids), Math.max(...ids)]);
  return rows.whereIn('subscriber_id', ids);
};
/** Recipients one job covers: a range of subscriber ids holding this many of them. */
export const RANGE_SIZE = 500;
/** Ranges whose ids queuedRanges reads at once. */
const RANGES_PAGE = 20;
/** Recipients a worker claims at once: at most these are sent twice after a crash. */
export const CLAIM_SIZE = 50;

/** How long a recipient whose first try failed for now (4xx, timeout) waits before the next (then doubling). */
export const RETRY_AFTER_MS = 60_000;
/** claimed_at of a recipient queued again after its `attempts`-th try: 1, 2, 4, 8 minutes later. */
const retryAt = (trx: Knex.Transaction, now: Date) =>
  trx.raw(
    `CASE attempts ${[1, 2, 3].map(() => 'WHEN ? THEN ?').join(' ')} ELSE ? END`,
    [1, 2, 3]
      .flatMap((n) => [n, new Date(now.getTime() + (2 ** (n - 1) - 1) * RETRY_AFTER_MS)])
      .concat([new Date(now.getTime() + 7 * RETRY_AFTER_MS)]),
  );

/** Tries of one recipient whose mail SMTP refused for a while (4xx, timeouts) before it fails. */
export const MAX_ATTEMPTS = 5;

/** Recipients one worker took to send: their ids and the token that says they are still its own. */
export interface Claim {
  token: string;
  ids: number[];
}

export interface SendRow {
  id: number;
  organization_id: number;
  message_id: number;
  /** The schedule whose run this is, or null for a send of POST /send. */
  schedule_id: number | null;
  status: string;
  test_mode: boolean;
  list_ids: number[];
}

export interface Outcome {
  id: number;
  state: 'sent' | 'failed' | 'skipped' | 'queued';
  mailId?: string;
  /** The relay's id of the mail (core Mailer), for provider events that carry only that. */
  relayId?: string;
  /** A sent recipient's address, as the `sent` webhook event tells it. */
  email?: string;
  error?: string;
  /**
   * Queued again without a try spent: the mail was not handed over at all (the relay out of reach, the
   * outbox's disk full; core `isHandoverUnavailable`), so it waits for them, not for the recipient.
   */
  notTried?: boolean;
  /** The mail reached SMTP: taken, refused or deferred (a test send's mail reaches nothing). */
  reached?: boolean;
  /** Not handed over because the relay refused our login: the send pauses until an operator fixes it. */
  needsOperator?: boolean;
}

const toSendRow = (r: Record<string, unknown>): SendRow => ({
  id: toInt(r.id),
  organization_id: toInt(r.organization_id),
  message_id: toInt(r.message_id),
  schedule_id: r.schedule_id === null || r.schedule_id === undefined ? null : toInt(r.schedule_id),
  status: String(r.status),
  test_mode: toBool(r.test_mode),
  list_ids: parseJson<number[]>(r.list_ids, []),
});

/**
 * The database side of sending: sends, their recipients and the state of each. The database is the
 * record of who has been sent what; the queue only carries id ranges of recipients still queued.
 */
@injectable()
export class SendStore {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SENDING_OPTIONS) private readonly options: SendingOptions,
    @inject(WebhookOutbox) private readonly webhooks: WebhookOutbox,
    @inject(MailEventLedger) private readonly ledger: MailEventLedger,
  ) {}

  async create(
    trx: Knex.Transaction,
    send: {
      organizationId: number;
      messageId: number;
      status: 'pending' | 'active';
      listIds: number[];
      testMode: boolean;
      scheduledAt: Date | null;
      scheduleId?: number;
    },
  ): Promise<number> {
    const now = this.clock.now();
    return insertedId(
      await trx('message_sends').insert({
        organization_id: send.organizationId,
        message_id: send.messageId,
        schedule_id: send.scheduleId ?? null,
        status: send.status,
        list_ids: JSON.stringify(send.listIds),
        test_mode: send.testMode,
        scheduled_at: send.scheduledAt,
        started_at: send.status === 'active' ? now : null,
        created_at: now,
        updated_at: now,
      }),
    );
  }

  async get(id: number, db: Knex | Knex.Transaction = this.knex): Promise<SendRow | null> {
    const row = await db('message_sends').where({ id }).first();
    return row ? toSendRow(row) : null;
  }

  /** A send as the API shows it. */
  async view(id: number): Promise<Send | null> {
    const row = await this.knex('message_sends').where({ id }).first();
    if (!row) return null;
    const [{ n }] = await this.knex('send_recipients')
      .where({ send_id: id })
      .whereIn('state', ['queued', 'sending'])
      .count({ n: '*' });
    return toSend(row, toInt(n));
  }

  /** The active subscribers of the lists now, each once: what a send would reach. */
  async countAudience(listIds: number[]): Promise<number> {
    const [{ n }] = await this.audience(this.knex, listIds).countDistinct({ n: 'm.subscriber_id' });
    return toInt(n);
  }

  /**
   * Writes the recipients of a send that starts: the lists' active subscribers, each once. A send of
   * POST /send leaves out those an earlier such send, or a cancelled schedule's run, of the message reached
   * (a send again after a cancel goes on where the first stopped); a schedule's run goes to everybody again, and so does a
   * test send: a dry run is of the whole audience each time (the draft may have changed since).
   */
  async addRecipients(trx: Knex.Transaction, send: SendRow): Promise<number> {
    const audience = this.audience(trx, send.list_ids);
    if (send.schedule_id === null && !send.test_mode)
      audience.whereNotExists((reached) =>
        reached
          .select(trx.raw('1'))
          .from('send_recipients as r')
          .join('message_sends as s', 's.id', 'r.send_id')
          .whereRaw('r.subscriber_id = m.subscriber_id')
          .andWhere({ 's.message_id': send.message_id, 's.test_mode': send.test_mode })
          // A schedule's run counts once cancelled: sending again goes on where it stopped, as after a
          // cancelled send (it mailed its reached recipients a second time until session 26).
          .where((earlier) => earlier.whereNull('s.schedule_id').orWhere('s.status', 'cancelled'))
          // In flight when that send was cancelled counts as reached: it may have gone out.
          .whereIn('r.state', ['sent', 'sending'])
          .andWhere('s.id', '<>', send.id),
      );
    await trx
      .into(trx.raw('?? (??, ??, ??)', ['send_recipients', 'send_id', 'subscriber_id', 'state']))
      .insert(
        audience
          .select(trx.raw('?', [send.id]), 'm.subscriber_id', trx.raw('?', ['queued']))
          .groupBy('m.subscriber_id'),
      );
    const [{ n }] = await trx('send_recipients').where({ send_id: send.id }).count({ n: '*' });
    await trx('message_sends')
      .where({ id: send.id })
      .update({ recipients: toInt(n) });
    return toInt(n);
  }

  private audience(knex: Knex | Knex.Transaction, listIds: number[]): Knex.QueryBuilder {
    return knex('list_subscribers as m').whereIn('m.list_id', listIds).andWhere('m.subscriber_status', 'active');
  }

  /**
   * [from, to) ranges of subscriber ids holding RANGE_SIZE queued recipients each, in order, read a page
   * of ids at a time: a send's whole audience (500,000 ids and more) is never held in memory at once.
   */
  async *queuedRanges(sendId: number): AsyncGenerator<{ from: number; to: number }> {
    let from = 0;
    let inRange = 0;
    let last: number | undefined;
    for (;;) {
      const page = this.knex('send_recipients').where({ send_id: sendId, state: 'queued' });
      if (last !== undefined) page.andWhere('subscriber_id', '>', last);
      const ids = (
        await page
          .orderBy('subscriber_id')
          .limit(RANGES_PAGE * RANGE_SIZE)
          .pluck('subscriber_id')
      ).map(toInt);
      for (const id of ids) {
        if (inRange === RANGE_SIZE) {
          yield { from, to: id };
          inRange = 0;
        }
        if (inRange === 0) from = id;
        inRange++;
      }
      if (ids.length) last = ids[ids.length - 1];
      if (ids.length < RANGES_PAGE * RANGE_SIZE) break;
    }
    if (inRange) yield { from, to: last! + 1 };
  }

  /**
   * Marks up to CLAIM_SIZE queued recipients of the range as being sent by this caller and returns
   * their ids. Two workers given the same range never claim the same recipient: each update changes
   * only rows still queued, and each reads back its own claim token.
   */
  async claim(sendId: number, from: number, to: number): Promise<Claim | null> {
    const retryBefore = new Date(this.clock.now().getTime() - RETRY_AFTER_MS);
    const candidates = await this.knex('send_recipients')
      .where({ send_id: sendId, state: 'queued' })
      .andWhere('subscriber_id', '>=', from)
      .andWhere('subscriber_id', '<', to)
      .andWhere((ready) => ready.whereNull('claimed_at').orWhere('claimed_at', '<', retryBefore))
      .orderBy('subscriber_id')
      .limit(CLAIM_SIZE)
      .pluck('subscriber_id');
    if (!candidates.length) return null;
    const token = crypto.randomBytes(9).toString('base64url');
    await keyedRecipients(this.knex, sendId, candidates)
      .where({ state: 'queued' })
      .update({
        state: 'sending',
        claim: token,
        claimed_at: this.clock.now(),
        attempts: this.knex.raw('attempts + 1'),
      });
    const ids = (
      await this.knex('send_recipients')
        .where({ send_id: sendId, state: 'sending', claim: token })
        .whereIn('subscriber_id', candidates)
        .orderBy('subscriber_id')
        .pluck('subscriber_id')
    ).map(toInt);
    return { token, ids };
  }

  /** Keeps a claim alive while its mails are being handed over (a throttled pool can take minutes). */
  async renew(sendId: number, claim: Claim): Promise<void> {
    await keyedRecipients(this.knex, sendId, claim.ids)
      .where({ state: 'sending', claim: claim.token })
      .update({ claimed_at: this.clock.now() });
  }

  /**
   * Records what happened to claimed recipients, and adds it to the send's, message's and subscribers'
   * counters. Only rows still held by this claim count: a claim the watchdog gave back (its worker seemed
   * dead) belongs to whoever claimed those recipients since.
   */
  async record(send: SendRow, claim: Claim, all: Outcome[]): Promise<void> {
    if (!all.length) return;
    const now = this.clock.now();
    const ids = all.map((o) => o.id);
    await transactionWithRetry(
      this.knex,
      async (trx) => {
        const held = keyedRecipients(trx, send.id, ids).where({ state: 'sending', claim: claim.token });
        const ours = new Set(((await lockedOnMysql(held).pluck('subscriber_id')) as unknown[]).map(toInt));
        const outcomes = all.filter((o) => ours.has(o.id));
        if (!outcomes.length) return;
        // One statement per state; the values that differ per recipient as a CASE on its id.
        for (const state of ['sent', 'failed', 'skipped', 'queued'] as const) {
          const these = outcomes.filter((o) => o.state === state);
          if (!these.length) continue;
          const byId = (value: (o: Outcome) => string | null) =>
            trx.raw(
              `CASE subscriber_id ${these.map(() => 'WHEN ? THEN ?').join(' ')} END`,
              these.flatMap((o) => [o.id, value(o)]),
            );
          await keyedRecipients(
            trx,
            send.id,
            these.map((o) => o.id),
          )
            .where({ state: 'sending', claim: claim.token })
            .update({
              state,
              claim: null,
              // A recipient queued again waits before its next try: RETRY_AFTER_MS, then twice as long
              // each time (claim() takes rows whose claimed_at is RETRY_AFTER_MS old).
              claimed_at: state === 'queued' ? retryAt(trx, now) : null,
              sent_at: state === 'sent' ? now : null,
              mail_id: state === 'sent' ? byId((o) => o.mailId ?? null) : null,
              error: state === 'sent' ? null : byId((o) => o.error ?? null),
            });
        }
        // A mail not handed over gives its try back, and waits RETRY_AFTER_MS like a first try.
        const notTried = outcomes.filter((o) => o.state === 'queued' && o.notTried).map((o) => o.id);
        if (notTried.length)
          await keyedRecipients(trx, send.id, notTried)
            .where({ state: 'queued' })
            .update({ attempts: trx.raw('attempts - 1'), claimed_at: now });
        // A recipient tried MAX_ATTEMPTS times fails for good instead of going back to the queue.
        const retried = outcomes.filter((o) => o.state === 'queued' && !o.notTried).map((o) => o.id);
        const exhausted = retried.length
          ? await keyedRecipients(trx, send.id, retried)
              .where({ state: 'queued' })
              .andWhere('attempts', '>=', MAX_ATTEMPTS)
              .update({ state: 'failed' })
          : 0;
        const count = (state: Outcome['state']) =>
          outcomes.filter((o) => o.state === state).length + (state === 'failed' ? exhausted : 0);
        await trx('message_sends')
          .where({ id: send.id })
          .update({
            sent: trx.raw('sent + ?', [count('sent')]),
            failed: trx.raw('failed + ?', [count('failed')]),
            skipped: trx.raw('skipped + ?', [count('skipped')]),
            ...waiting(trx, outcomes, now),
            updated_at: now,
          });
        if (count('failed')) await this.pauseIfFailing(trx, send.id, outcomes.find((o) => o.error)?.error ?? null);
        const sent = outcomes.filter((o) => o.state === 'sent');
        const relayed = sent.filter((o) => o.relayId);
        if (relayed.length)
          await trx('send_relay_ids')
            .insert(
              relayed.map((o) => ({
                organization_id: send.organization_id,
                relay_id: o.relayId,
                send_id: send.id,
                subscriber_id: o.id,
              })),
            )
            .onConflict(['organization_id', 'relay_id'])
            .ignore();
        if (send.test_mode || !sent.length) return;
        await this.ledger.apply(
          trx,
          now,
          sent.map((o) => ({
            type: 'sent',
            organizationId: send.organization_id,
            messageId: send.message_id,
            subscriberId: o.id,
            sendId: send.id,
            occurredAt: now,
            source: { kind: 'send' },
            email: o.email ?? null,
          })),
        );
      },
      RECORD_ATTEMPTS,
    );
  }

  /** Pauses an active send, with the reason its message shows. */
  async pause(sendId: number, reason: string): Promise<void> {
    await this.knex('message_sends')
      .where({ id: sendId, status: 'active' })
      .update({ status: 'paused', pause_reason: reason.slice(0, 255), updated_at: this.clock.now() });
  }

  /** Pauses an active send whose failures reached the configured share of its tried recipients. */
  private async pauseIfFailing(trx: Knex.Transaction, sendId: number, lastError: string | null): Promise<void> {
    const row = await trx('message_sends').where({ id: sendId }).first('sent', 'failed');
    const failed = toInt(row.failed);
    const tried = failed + toInt(row.sent);
    if (tried < this.options.pauseMinimumTried || failed < tried * this.options.pauseFailureRate) return;
    const reason = `${failed} of ${tried} recipients failed${lastError ? ` (last: ${lastError})` : ''}`;
    await trx('message_sends')
      .where({ id: sendId, status: 'active' })
      .update({ status: 'paused', pause_reason: reason.slice(0, 255), updated_at: this.clock.now() });
  }

  /** Finishes an active send with no recipient left to send; returns whether this call did. */
  async finishIfDone(send: SendRow): Promise<boolean> {
    const now = this.clock.now();
    return transactionWithRetry(this.knex, async (trx) => {
      const left = await trx('send_recipients')
        .where({ send_id: send.id })
        .whereIn('state', ['queued', 'sending'])
        .first('subscriber_id');
      if (left) return false;
      const finished = await trx('message_sends')
        .where({ id: send.id, status: 'active' })
        .update({ status: 'sent', finished_at: now, updated_at: now });
      if (!finished) return false;
      if (!send.test_mode) {
        const done = await trx('messages')
          .where({ id: send.message_id, status: 'active' })
          .update({ status: 'sent', sent_at: now, updated_at: now });
        if (done) {
          await addDailyMetrics(trx, send.organization_id, dayOf(now), { [METRIC.messagesSent]: 1 });
          const counts = await trx('message_sends')
            .where({ id: send.id })
            .first('recipients', 'sent', 'failed', 'skipped');
          await this.webhooks.emit(trx, send.organization_id, [
            {
              event: 'message.sent',
              occurredAt: now,
              data: {
                message_id: send.message_id,
                send_id: send.id,
                recipients: toInt(counts.recipients),
                sent: toInt(counts.sent),
                failed: toInt(counts.failed),
                skipped: toInt(counts.skipped),
              },
            },
          ]);
        }
      }
      return true;
    });
  }

  /** Claims older than `before` whose worker died: their recipients are queued again. */
  async releaseStaleClaims(sendId: number, before: Date): Promise<number> {
    return this.knex('send_recipients')
      .where({ send_id: sendId, state: 'sending' })
      .andWhere('claimed_at', '<', before)
      .update({ state: 'queued', claim: null, claimed_at: null });
  }

  /**
   * Recipients claimed by a worker that has not renewed its claim since `before` (killed, or cut off from
   * the database): how many, and the oldest renewal; null when there are none.
   */
  async silentClaims(sendId: number, before: Date): Promise<{ count: number; since: Date } | null> {
    const [row]: Array<{ n: unknown; since: unknown }> = await this.knex('send_recipients')
      .where({ send_id: sendId, state: 'sending' })
      .andWhere('claimed_at', '<', before)
      .select(this.knex.raw('count(*) as n'), this.knex.raw('min(claimed_at) as since'));
    const count = toInt(row?.n ?? 0);
    const since = toDate(row?.since);
    return count && since ? { count, since } : null;
  }

  /** The send says why it waits, unless it already waits for something (its relay, say). */
  async markWaiting(sendId: number, since: Date, reason: string): Promise<void> {
    await this.knex('message_sends')
      .where({ id: sendId, status: 'active' })
      .whereNull('waiting_since')
      .update({ waiting_since: since, waiting_reason: reason.slice(0, 255) });
  }

  /** The latest send of a message, as GET /messages/{id} shows it (`delivery`). */
  async latestOf(messageId: number): Promise<Send | null> {
    const row = await this.knex('message_sends').where({ message_id: messageId }).orderBy('id', 'desc').first('id');
    return row ? this.view(toInt(row.id)) : null;
  }
}

/**
 * The send's waiting columns after a claim: set (kept since the first) when a mail could not be handed over,
 * else cleared when one reached SMTP (taken, refused or deferred), left alone when none did (all skipped, or
 * none could be composed).
 */
function waiting(trx: Knex.Transaction, outcomes: Outcome[], now: Date) {
  const notTried = outcomes.find((o) => o.notTried);
  if (notTried)
    return {
      waiting_since: trx.raw('COALESCE(waiting_since, ?)', [now]),
      waiting_reason: (notTried.error ?? 'mail cannot be handed over').slice(0, 255),
    };
  if (outcomes.some((o) => o.reached)) return { waiting_since: null, waiting_reason: null };
  return {};
}

/** The lists of a message's latest real send, or null when it was never sent. */
export async function latestListIds(knex: Knex, messageId: number): Promise<number[] | null> {
  const row = await knex('message_sends')
    .where({ message_id: messageId, test_mode: false })
    .orderBy('id', 'desc')
    .first('list_ids');
  return row ? parseJson<number[]>(row.list_ids, []) : null;
}

/** A send's answer; it shows a wait for the relay only while it is active (paused or cancelled, it waits for nobody). */
export const toSend = (row: Record<string, unknown>, queued: number): Send => ({
  id: toInt(row.id),
  status: row.status as Send['status'],
  test_mode: toBool(row.test_mode),
  list_ids: parseJson<number[]>(row.list_ids, []),
  scheduled_at: toIso(row.scheduled_at),
  recipients: toInt(row.recipients),
  queued,
  sent: toInt(row.sent),
  failed: toInt(row.failed),
  skipped: toInt(row.skipped),
  pause_reason: (row.pause_reason as string | null) ?? null,
  waiting_since: row.status === 'active' ? toIso(row.waiting_since) : null,
  waiting_reason: row.status === 'active' ? ((row.waiting_reason as string | null) ?? null) : null,
  started_at: toIso(row.started_at),
  finished_at: toIso(row.finished_at),
});
