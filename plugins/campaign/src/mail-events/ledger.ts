import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  addByKey,
  byPrimaryKey,
  dialectOfKnex,
  placeholders,
  selectText,
  setWhereIn,
  toInt,
  updateText,
  writeText,
  WriteConflict,
} from '@switchboard/core';
import { MailCounts } from '../daily-figures';
import { engage, Engagement, SubscriberWriter } from '../audience/subscribers';
import type { SubscriberStatus } from '../shared/subscriber-statuses';
import { WebhookEvent, WebhookOutbox } from '../webhooks';
import { COUNTERS, CountedMailEvent, FIRSTS, MailEvent } from './mail-event';
import { recordLinkUnsubscribe, recordTracked } from './own-records';
import { TimelineCounts } from './timelines';

const OUTCOMES = new Set(['delivered', 'bounced', 'complained', 'unsubscribed']);
const CHUNK = 500;

/** The status an event moves its subscriber to: a hard bounce bounced, an unsubscribe or complaint unsubscribed. */
function statusAfter(e: MailEvent): SubscriberStatus | null {
  if (e.source.kind !== 'provider' && e.source.kind !== 'link') return null;
  if (e.type === 'bounced') return e.bounce === 'soft' ? null : 'bounced';
  if (e.type === 'unsubscribed' || e.type === 'complained') return 'unsubscribed';
  return null;
}

/** The counters a counted event adds 1 to: its type's, a first open's or click's, and a click's that opens its mail. */
const countersOf = (e: CountedMailEvent) => [
  COUNTERS[e.type]!,
  ...(e.first ? [FIRSTS[e.type as keyof typeof FIRSTS]] : []),
  ...(e.opensMail ? [FIRSTS.opened] : []),
];

const reasonOf = (e: MailEvent) =>
  e.source.kind === 'provider' ? `${e.source.provider} ${e.type}` : 'unsubscribe link';

/** A send's first opens and clicks to mark: the subscribers of each. */
interface Marks {
  sendId: number;
  opened: number[];
  clicked: number[];
}

/** A recipient's row of a send, as far as first opens and clicks go. */
interface MailRow {
  sendId: number;
  opened: boolean;
  clicked: boolean;
}

/**
 * The one home of what a mail event does (issue 23): the message's and subscriber's counters, first
 * opens and clicks, the analytics figures, the hourly and daily timelines, the webhook outbox and the
 * subscriber's status, all inside the caller's transaction, so an event is never kept without its
 * effects nor applied without being kept. `now` is the time the effects are counted at: the stamps the
 * callers store with the events (sent_at, received_at), which the rebuilds replay (replay.ts).
 * Provider events come recorded and deduplicated by the caller; an unsubscribe of our own link is
 * recorded here, once per message and subscriber.
 */
@injectable()
export class MailEventLedger {
  constructor(
    @inject(SubscriberWriter) private readonly writer: SubscriberWriter,
    @inject(WebhookOutbox) private readonly webhooks: WebhookOutbox,
  ) {}

  async apply(trx: Knex.Transaction, now: Date, events: MailEvent[]): Promise<void> {
    // Our link's unsubscribe is recorded here, once per message and subscriber: one recorded before (the
    // subscriber came back and left again) moves the status only.
    const counting: MailEvent[] = [];
    for (const e of events) {
      if (e.source.kind === 'link') {
        const ids = { organizationId: e.organizationId, messageId: e.messageId!, subscriberId: e.subscriberId! };
        if (e.messageId === null || e.subscriberId === null || !(await recordLinkUnsubscribe(trx, ids, now))) continue;
      }
      counting.push(e);
    }
    const { counted, marks } = await this.counted(trx, now, counting);
    const analytics = new MailCounts(now);
    const timeline = new TimelineCounts();
    for (const e of counted) timeline.add(e.messageId!, e.type, e.occurredAt);
    // The rows every run shares (a message's counters, the day's figures, the timelines) come late, just
    // before the commit: a run in flight alongside this one waits for their locks only that long. Status
    // changes, rare, stay last (the crash tests hold them to find every other effect written).
    const { received, engaged } = this.subscriberCounts(counted, analytics);
    for (const mark of marks) await this.markFirsts(trx, now, mark);
    // The engaged subscribers' previous engagement days, as engage read them before moving them to today.
    analytics.engagedBefore(engaged.size ? await engage(trx, analytics.day, engaged) : new Map());
    if (received.size) await this.countReceived(trx, received);
    await recordTracked(trx, counted);
    await this.tell(trx, now, counted);
    await this.countMessages(trx, counted);
    await analytics.save(trx);
    await timeline.save(trx);
    await this.moveStatuses(trx, events);
  }

  /**
   * The events that count: sends, and every outcome, open and click whose message and subscriber are known;
   * a mail's first open and first click (a recipient's row of one of our sends) marked `first`. A click of a mail not opened yet opens it too (images are
   * often blocked): the mail counts as opened, though no open event was seen (`opensMail`). With them, the
   * marks to write (per send: the subscribers whose first open, and whose first click, this is) and the
   * engagement days of the mails' subscribers.
   */
  private async counted(
    trx: Knex.Transaction,
    now: Date,
    events: MailEvent[],
  ): Promise<{ counted: CountedMailEvent[]; marks: Marks[] }> {
    const mails = await this.mailRows(
      trx,
      events.filter((e) => e.type in FIRSTS),
    );
    const marks = new Map<number, Marks>();
    const mark = (sendId: number, column: 'opened' | 'clicked', subscriberId: number) =>
      (marks.get(sendId) ?? marks.set(sendId, { sendId, opened: [], clicked: [] }).get(sendId)!)[column].push(
        subscriberId,
      );
    const counted: CountedMailEvent[] = [];
    for (const e of events) {
      if (e.messageId === null || e.subscriberId === null) continue;
      if (e.type === 'sent') {
        if (e.source.kind === 'send') counted.push(e);
      } else if (OUTCOMES.has(e.type)) counted.push(e);
      else if (e.type === 'opened' || e.type === 'clicked') {
        const mail = mails.get(
          e.sendId !== undefined ? `s${e.sendId}.${e.subscriberId}` : `m${e.messageId}.${e.subscriberId}`,
        );
        // A provider's open or click of a message and subscriber it found counts (spec §6) even when no mail
        // of ours is known to it; only a mail's marks make it unique.
        if (!mail) {
          if (e.source.kind === 'provider') counted.push(e);
          continue;
        }
        const firstOpen = !mail.opened;
        if (firstOpen) {
          mail.opened = true;
          mark(mail.sendId, 'opened', e.subscriberId);
        }
        if (e.type === 'opened') counted.push({ ...e, sendId: mail.sendId, first: firstOpen });
        else {
          const firstClick = !mail.clicked;
          if (firstClick) {
            mail.clicked = true;
            mark(mail.sendId, 'clicked', e.subscriberId);
          }
          counted.push({ ...e, sendId: mail.sendId, first: firstClick, opensMail: firstOpen });
        }
      }
    }
    return { counted, marks: [...marks.values()] };
  }

  /**
   * A send's first opens and clicks marked in one statement. The rows were read locked (mailRows): no other
   * transaction marked one since, so every row named changes; fewer is a conflict, run again.
   */
  private async markFirsts(trx: Knex.Transaction, now: Date, { sendId, opened, clicked }: Marks): Promise<void> {
    const rows = [...new Set([...opened, ...clicked])];
    const markOf = (column: string, ids: number[]) =>
      ids.length ? [setWhereIn({ key: 'subscriber_id', ids, of: rows.length }, column, now)] : [];
    const marked = await updateText(
      trx,
      'send_recipients',
      [...markOf(FIRSTS.opened.mark, opened), ...markOf(FIRSTS.clicked.mark, clicked)],
      { sql: `\`send_id\` = ? and \`subscriber_id\` in (${placeholders(rows.length)})`, values: [sendId, ...rows] },
    );
    if (marked !== rows.length) throw new WriteConflict(`first opens or clicks of send ${sendId} marked at once`);
  }

  /**
   * The mails opens and clicks are about, read and locked: a tracked link's own send row, else the
   * subscriber's latest mail of the message (a provider's event names the message, not which of its sends);
   * with their subscribers' rows locked too: a subscriber being deleted is not engaged, and no other run
   * engages it meanwhile (engage relies on this). A deleted subscriber's mails are not found.
   */
  private async mailRows(trx: Knex.Transaction, events: MailEvent[]): Promise<Map<string, MailRow>> {
    const mails = new Map<string, MailRow>();
    const messages = [...new Set(events.map((e) => e.messageId!).filter((id) => id !== null))];
    const subscribers = [...new Set(events.map((e) => e.subscriberId!).filter((id) => id !== null))].sort(
      (a, b) => a - b,
    );
    if (!messages.length || !subscribers.length) return mails;
    // The mails' sends: a tracked link names its own; a provider's event, every send of its message. Then
    // the recipients' rows by primary key (send, subscriber), and their subscribers' by theirs.
    const messageOf = new Map<number, number>(
      events.filter((e) => e.sendId !== undefined).map((e) => [e.sendId!, e.messageId!]),
    );
    const unsent = [...new Set(events.filter((e) => e.sendId === undefined).map((e) => e.messageId!))];
    if (unsent.length)
      for (const s of await selectText(
        trx,
        `select \`id\`, \`message_id\` from \`message_sends\` where \`message_id\` in (${placeholders(unsent.length)})`,
        unsent,
      ))
        messageOf.set(toInt(s.id), toInt(s.message_id));
    if (!messageOf.size) return mails;
    const sends = [...messageOf.keys()];
    // SQLite has no row locks to take: its one writer at a time is the lock.
    const locked = dialectOfKnex(trx) === 'mysql' ? ' for update' : '';
    for (let i = 0; i < subscribers.length; i += CHUNK) {
      const part = subscribers.slice(i, i + CHUNK);
      const rows = await selectText(
        trx,
        'select `r`.`send_id`, `r`.`subscriber_id`, `r`.`opened_at`, `r`.`clicked_at` ' +
          `from ${byPrimaryKey(trx, 'send_recipients', 'r')} inner join \`subscribers\` as \`s\` on \`s\`.\`id\` = \`r\`.\`subscriber_id\` ` +
          `where \`r\`.\`send_id\` in (${placeholders(sends.length)}) and \`r\`.\`subscriber_id\` in (${placeholders(part.length)}) ` +
          `order by \`r\`.\`send_id\`, \`r\`.\`subscriber_id\`${locked}`,
        [...sends, ...part],
      );
      for (const r of rows) {
        const mail = { sendId: toInt(r.send_id), opened: r.opened_at !== null, clicked: r.clicked_at !== null };
        const subscriberId = toInt(r.subscriber_id);
        mails.set(`s${mail.sendId}.${subscriberId}`, mail);
        // In send order: the latest send's row stays.
        mails.set(`m${messageOf.get(mail.sendId)}.${subscriberId}`, mail);
      }
    }
    return mails;
  }

  /**
   * The subscribers' counters of counted events, and the analytics figures they add to: the mails each
   * subscriber received (its `subscribers` row), and the first opens and clicks of its mails (its
   * engagement row, which also moves its latest engagement day).
   */
  private subscriberCounts(
    counted: CountedMailEvent[],
    analytics: MailCounts,
  ): { received: Map<number, number>; engaged: Map<number, Engagement> } {
    const received = new Map<number, number>();
    const engaged = new Map<number, Engagement>();
    for (const e of counted)
      for (const c of countersOf(e)) {
        analytics.count(e.organizationId, c.message, e.subscriberId!);
        const id = e.subscriberId!;
        if (c.subscriber === COUNTERS.sent!.subscriber) received.set(id, (received.get(id) ?? 0) + 1);
        else if (c === FIRSTS.opened || c === FIRSTS.clicked) {
          const engagement = engaged.get(id) ?? engaged.set(id, { opened: 0, clicked: 0 }).get(id)!;
          engagement[c === FIRSTS.opened ? 'opened' : 'clicked']++;
        }
      }
    return { received, engaged };
  }

  /** The mails subscribers received, added to their counters in one statement, in id order. */
  private async countReceived(trx: Knex.Transaction, received: Map<number, number>): Promise<void> {
    const ids = [...received.keys()].sort((a, b) => a - b);
    await updateText(trx, 'subscribers', [addByKey('id', COUNTERS.sent!.subscriber!, received, ids.length)], {
      sql: `\`id\` in (${placeholders(ids.length)})`,
      values: ids,
    });
  }

  /** The messages' counters of counted events: one statement per message, in id order. */
  private async countMessages(trx: Knex.Transaction, counted: CountedMailEvent[]) {
    const byMessage = new Map<number, Map<string, number>>();
    for (const e of counted)
      for (const c of countersOf(e)) {
        const columns = byMessage.get(e.messageId!) ?? byMessage.set(e.messageId!, new Map()).get(e.messageId!)!;
        columns.set(c.message, (columns.get(c.message) ?? 0) + 1);
      }
    for (const id of [...byMessage.keys()].sort((a, b) => a - b)) {
      const columns = [...byMessage.get(id)!];
      await writeText(
        trx,
        `update \`messages\` set ${columns.map(([c]) => `\`${c}\` = \`${c}\` + ?`).join(', ')} where \`id\` = ?`,
        [...columns.map(([, n]) => n), id],
      );
    }
  }

  /** The webhook events of counted events (a test send's mail aside): each organization's in one write. */
  private async tell(trx: Knex.Transaction, now: Date, counted: CountedMailEvent[]): Promise<void> {
    const byOrganization = new Map<number, WebhookEvent[]>();
    for (const e of counted) {
      if (e.testMode) continue;
      const list =
        byOrganization.get(e.organizationId) ?? byOrganization.set(e.organizationId, []).get(e.organizationId)!;
      list.push(new MailWebhookEvent(e));
    }
    for (const [organizationId, list] of byOrganization) await this.webhooks.emit(trx, organizationId, list);
  }

  /**
   * A hard bounce, complaint or unsubscribe moves its subscriber. The writer's change brings counters,
   * lists and search rows along; a status the subscriber has already changes nothing. In subscriber
   * order, so that two runs at once take the rows' locks alike. The caller makes the status count rows
   * first (`ensureStatusCountRows`).
   */
  private async moveStatuses(trx: Knex.Transaction, events: MailEvent[]): Promise<void> {
    const changes = events
      .filter((e) => e.messageId !== null && e.subscriberId !== null && statusAfter(e))
      .sort((a, b) => a.subscriberId! - b.subscriberId!);
    for (const e of changes) {
      const status = statusAfter(e)!;
      await this.writer.setStatusWithin(trx, e.organizationId, e.subscriberId!, status, {
        ...(status === 'unsubscribed' ? { unsubscribe_reason: reasonOf(e) } : {}),
      });
    }
  }
}

/** A counted event as webhooks take it: the payload is made only if a subscription wants the event (most organizations have none). */
class MailWebhookEvent implements WebhookEvent {
  readonly event: WebhookEvent['event'];
  readonly occurredAt: Date;

  constructor(private readonly counted: CountedMailEvent) {
    this.event = counted.type as WebhookEvent['event'];
    this.occurredAt = counted.occurredAt;
  }

  get data(): Record<string, unknown> {
    return webhookData(this.counted);
  }
}

/** A mail event's webhook payload: the mail's ids, and what its source knows (docs/decisions.md, Outbound webhooks). */
function webhookData(e: CountedMailEvent): Record<string, unknown> {
  const mail = { message_id: e.messageId, subscriber_id: e.subscriberId };
  switch (e.source.kind) {
    case 'send':
      return { message_id: e.messageId, send_id: e.sendId, subscriber_id: e.subscriberId, email: e.email ?? null };
    case 'tracking':
      return {
        message_id: e.messageId,
        send_id: e.sendId,
        subscriber_id: e.subscriberId,
        ...(e.type === 'clicked' ? { url: e.url ?? null } : {}),
        first: e.first === true,
      };
    case 'link':
      return { ...mail, email: e.email ?? null, source: 'unsubscribe link' };
    case 'provider':
      return {
        ...mail,
        email: e.email ?? null,
        provider: e.source.provider,
        provider_event_id: e.source.providerEventId,
        ...(e.type === 'bounced' ? { bounce: e.bounce ?? 'hard' } : {}),
        ...(e.type in FIRSTS ? { first: e.first === true } : {}),
      };
  }
}
