import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, GroupCommit, SERVICES, toDate, toInt, transactionWithRetry } from '@switchboard/core';
import { addToTimelines } from './timelines';
import type { EventType, NormalizedEvent } from '@switchboard/provider-kit';
import { SubscriberWriter } from '../audience/subscribers/writer';
import { ensureStatusCountRows } from '../audience/subscribers/status-counts';
import { EventLinker } from './event-linker';
import type { SubscriberStatus } from '../shared/subscriber-statuses';
import type { ReceivingEndpoint } from './inbound-webhooks/service';
import { MailCounts } from '../analytics/mail-counts';
import { WebhookEvent, WebhookOutbox } from '../webhooks/outbox';

/** The message counter each event type adds to (opens and clicks count once per recipient, below). */
const COUNTERS: Partial<Record<EventType, string>> = {
  delivered: 'count_delivered',
  bounced: 'count_bounced',
  unsubscribed: 'count_stop',
  complained: 'count_complained',
};
const INSERT_CHUNK = 500;
/** Provider events told to webhooks as they are recorded (opens and clicks: the first per mail). */
const WEBHOOK_MAIL_EVENTS = new Set<EventType>(['delivered', 'bounced', 'complained', 'unsubscribed']);

/** The (message.subscriber) pairs whose first open and first click a run counted. */
type FirstEngagements = Record<'opened_at' | 'clicked_at', Set<string>>;

interface RecordedEvent {
  organization_id: unknown;
  provider: string;
  provider_event_id: string;
  message_id: unknown;
  subscriber_id: unknown;
  event_type: string;
  bounce: unknown;
  recipient: unknown;
  event_at: unknown;
}

const eventKey = (e: { organization_id: unknown; provider: string; provider_event_id: string }) =>
  `${toInt(e.organization_id)}\u0000${e.provider}\u0000${e.provider_event_id}`;

/** The status an event moves its subscriber to: a hard bounce bounced, an unsubscribe or complaint unsubscribed. */
function statusAfter(event: RecordedEvent): SubscriberStatus | null {
  if (event.event_type === 'bounced') return event.bounce === 'soft' ? null : 'bounced';
  if (event.event_type === 'unsubscribed' || event.event_type === 'complained') return 'unsubscribed';
  return null;
}

/** A verified request's events, as the receiving route hands them over. */
interface Submission {
  endpoint: ReceivingEndpoint;
  provider: string;
  events: NormalizedEvent[];
}

interface Receipt {
  received: number;
  recorded: number;
}

/** Events of one run, at most: a request heavier than that runs alone. */
const RUN_EVENTS = 1_000;
/**
 * Runs in flight at once per process: a second run's statements overlap the first's commit (batches of
 * 100 events: 13,000 events/s with one, 16,100 with two; docs/performance.md). Their row locks may
 * meet in another order: a deadlock is run again (transactionWithRetry).
 */
const RUNS_AT_ONCE = 2;

/**
 * Records verified requests' events and applies them (campaign spec §6): each event is written once
 * per (organization, provider, provider event id) with the message and subscriber it is linked to, and
 * only the events a run wrote change counters and statuses, so a provider's retry changes nothing.
 * Requests arriving together are recorded together, one transaction for all (core GroupCommit): the
 * request is answered once its events are committed.
 */
@injectable()
export class InboundEventRecorder {
  private readonly runs = new GroupCommit<Submission, Receipt>((batch) => this.recordTogether(batch), {
    maxWeight: RUN_EVENTS,
    concurrency: RUNS_AT_ONCE,
    weight: (s) => s.events.length,
  });

  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SubscriberWriter) private readonly writer: SubscriberWriter,
    @inject(EventLinker) private readonly linker: EventLinker,
    @inject(WebhookOutbox) private readonly webhooks: WebhookOutbox,
  ) {}

  async record(endpoint: ReceivingEndpoint, provider: string, events: NormalizedEvent[]): Promise<Receipt> {
    if (!events.length) return { received: 0, recorded: 0 };
    return this.runs.submit({ endpoint, provider, events });
  }

  private async recordTogether(batch: Submission[]): Promise<Receipt[]> {
    // Which submission each event came from: the events are flattened in order.
    const owner = batch.flatMap((s, k) => s.events.map(() => k));
    const linked = await this.linker.link(
      batch.flatMap((s) => s.events.map((event) => ({ organizationId: s.endpoint.organizationId, event }))),
    );
    const receipt = crypto.randomBytes(12).toString('hex');
    const now = this.clock.now();
    const rows = linked.map(({ organizationId, event: e }, i) => ({
      organization_id: organizationId,
      webhook_endpoint_id: batch[owner[i]].endpoint.id,
      provider: batch[owner[i]].provider,
      provider_event_id: e.providerEventId.slice(0, 191),
      message_id: e.messageId,
      subscriber_id: e.subscriberId,
      recipient: e.recipient?.slice(0, 191) ?? null,
      event_type: e.type,
      bounce: e.bounce ?? null,
      provider_message_id: e.providerMessageId?.slice(0, 191) ?? null,
      payload: JSON.stringify(e.raw ?? null),
      event_at: e.occurredAt,
      received_at: now,
      receipt,
    }));
    for (const orgId of new Set(batch.map((s) => s.endpoint.organizationId)))
      await ensureStatusCountRows(this.knex, orgId);
    const recorded = await transactionWithRetry(this.knex, async (trx) => {
      for (let i = 0; i < rows.length; i += INSERT_CHUNK)
        await trx('inbound_events')
          .insert(rows.slice(i, i + INSERT_CHUNK))
          .onConflict(['organization_id', 'provider', 'provider_event_id'])
          .ignore();
      const mine = await this.writtenBy(trx, receipt, rows);
      const linked = mine.filter((e) => e.message_id !== null && e.subscriber_id !== null);
      const firsts = await this.countOnMessages(trx, linked);
      await this.tellWebhooks(trx, linked, firsts);
      await addToTimelines(
        trx,
        mine.filter((e) => e.message_id !== null),
      );
      await this.applyStatuses(trx, linked);
      return mine;
    });
    // Each event this run wrote is credited to the first submission that carried it.
    const firstCarrier = new Map<string, number>();
    rows.forEach((row, i) => {
      const key = eventKey(row);
      if (!firstCarrier.has(key)) firstCarrier.set(key, owner[i]);
    });
    const counts = batch.map((s) => ({ received: s.events.length, recorded: 0 }));
    for (const event of recorded) counts[firstCarrier.get(eventKey(event))!].recorded++;
    return counts;
  }

  /**
   * A hard bounce, complaint or unsubscribe moves its subscriber, in the transaction that records the event:
   * a crash cannot keep the event (which a provider's retry then finds already recorded) and lose the change.
   * The writer's change brings counters, lists and search rows along; a status the subscriber has already
   * changes nothing. In subscriber order, so that two runs at once take the rows' locks alike.
   */
  private async applyStatuses(trx: Knex.Transaction, events: RecordedEvent[]): Promise<void> {
    const changes = events
      .filter((e) => e.subscriber_id !== null && statusAfter(e))
      .sort((a, b) => toInt(a.subscriber_id) - toInt(b.subscriber_id));
    for (const event of changes) {
      const status = statusAfter(event)!;
      await this.writer.setStatusWithin(trx, toInt(event.organization_id), toInt(event.subscriber_id), status, {
        ...(status === 'unsubscribed' ? { unsubscribe_reason: `${event.provider} ${event.event_type}` } : {}),
      });
    }
  }

  /** The rows this run wrote (a retried event's row was written before, under another receipt). */
  private async writtenBy(
    trx: Knex.Transaction,
    receipt: string,
    rows: Array<{ organization_id: number; provider: string; provider_event_id: string }>,
  ): Promise<RecordedEvent[]> {
    const groups = new Map<string, { organizationId: number; provider: string; ids: Set<string> }>();
    for (const r of rows) {
      const key = `${r.organization_id}\u0000${r.provider}`;
      const group = groups.get(key) ?? { organizationId: r.organization_id, provider: r.provider, ids: new Set() };
      group.ids.add(r.provider_event_id);
      groups.set(key, group);
    }
    const written: RecordedEvent[] = [];
    for (const { organizationId, provider, ids } of groups.values()) {
      const all = [...ids];
      for (let i = 0; i < all.length; i += INSERT_CHUNK)
        written.push(
          ...((await trx('inbound_events')
            .where({ organization_id: organizationId, provider, receipt })
            .whereIn('provider_event_id', all.slice(i, i + INSERT_CHUNK))
            .select(
              'organization_id',
              'provider',
              'provider_event_id',
              'message_id',
              'subscriber_id',
              'event_type',
              'bounce',
              'recipient',
              'event_at',
            )) as RecordedEvent[]),
        );
    }
    return written;
  }

  /**
   * The message counters, a statement per (message, counter). Opens and clicks count once per
   * recipient, as tracked opens and clicks do (a click is an open too): the first marks the recipient's
   * row of the message's send.
   */
  private async countOnMessages(trx: Knex.Transaction, events: RecordedEvent[]): Promise<FirstEngagements> {
    const increments = new Map<string, number>();
    const analytics = new MailCounts(this.clock.now());
    const add = (table: string, id: number, column: string) => {
      const key = `${table}\u0000${id}\u0000${column}`;
      increments.set(key, (increments.get(key) ?? 0) + 1);
    };
    const organizationOf = new Map(events.map((e) => [toInt(e.message_id), toInt(e.organization_id)]));
    for (const e of events) {
      const column = COUNTERS[e.event_type as EventType];
      if (!column) continue;
      add('messages', toInt(e.message_id), column);
      analytics.count(toInt(e.organization_id), column);
    }
    const firsts: FirstEngagements = { opened_at: new Set(), clicked_at: new Set() };
    const engaged = events.filter((e) => e.event_type === 'opened' || e.event_type === 'clicked');
    for (const column of ['opened_at', 'clicked_at'] as const) {
      const wanted = engaged.filter((e) => column === 'opened_at' || e.event_type === 'clicked');
      if (!wanted.length) continue;
      const fresh = await trx('send_recipients as r')
        .join('message_sends as s', 's.id', 'r.send_id')
        .whereIn('s.message_id', [...new Set(wanted.map((e) => toInt(e.message_id)))])
        .whereIn('r.subscriber_id', [...new Set(wanted.map((e) => toInt(e.subscriber_id)))])
        .whereNull(`r.${column}`)
        .select('r.send_id', 'r.subscriber_id', 's.message_id');
      const pairs = new Set(wanted.map((e) => `${toInt(e.message_id)}.${toInt(e.subscriber_id)}`));
      const counted = new Set<string>();
      const marked = new Map<number, number[]>();
      for (const r of fresh as Array<Record<string, unknown>>) {
        const pair = `${toInt(r.message_id)}.${toInt(r.subscriber_id)}`;
        if (!pairs.has(pair)) continue;
        const sendId = toInt(r.send_id);
        (marked.get(sendId) ?? marked.set(sendId, []).get(sendId)!).push(toInt(r.subscriber_id));
        if (counted.has(pair)) continue;
        counted.add(pair);
        firsts[column].add(pair);
        const [message, subscriber] =
          column === 'opened_at' ? ['count_read', 'messages_opened'] : ['count_clicked', 'messages_clicked'];
        add('messages', toInt(r.message_id), message);
        add('subscribers', toInt(r.subscriber_id), subscriber);
        analytics.count(organizationOf.get(toInt(r.message_id))!, message, toInt(r.subscriber_id));
      }
      // A statement per send, not per recipient.
      for (const [sendId, subscribers] of marked)
        await trx('send_recipients')
          .where('send_id', sendId)
          .whereIn('subscriber_id', subscribers)
          .whereNull(column)
          .update({ [column]: this.clock.now() });
    }
    // A statement per table, column and amount: the ids that add the same.
    const grouped = new Map<string, number[]>();
    for (const [key, n] of increments) {
      const [table, id, column] = key.split('\u0000');
      const group = `${table}\u0000${column}\u0000${n}`;
      (grouped.get(group) ?? grouped.set(group, []).get(group)!).push(Number(id));
    }
    // The engaged subscribers' previous engagement days are read before their increments set today's.
    await analytics.readEngagement(trx);
    for (const [group, ids] of grouped) {
      const [table, column, n] = group.split('\u0000');
      if (table === 'subscribers')
        await trx(table)
          .whereIn('id', ids)
          .update({ [column]: trx.raw('?? + ?', [column, Number(n)]), last_engaged_day: analytics.day });
      else await trx(table).whereIn('id', ids).increment(column, Number(n));
    }
    await analytics.save(trx);
    return firsts;
  }

  /**
   * The webhook events of the recorded events: each delivery, bounce, complaint and unsubscribe, and
   * the first open and click of a mail (as its statistics count them).
   */
  private async tellWebhooks(trx: Knex.Transaction, events: RecordedEvent[], firsts: FirstEngagements) {
    const told = new Set<string>();
    const byOrganization = new Map<number, WebhookEvent[]>();
    for (const e of events) {
      const pair = `${toInt(e.message_id)}.${toInt(e.subscriber_id)}`;
      const type = e.event_type as EventType;
      if (type === 'opened' || type === 'clicked') {
        const key = `${type}.${pair}`;
        if (!firsts[type === 'opened' ? 'opened_at' : 'clicked_at'].has(pair) || told.has(key)) continue;
        told.add(key);
      } else if (!WEBHOOK_MAIL_EVENTS.has(type)) continue;
      const organizationId = toInt(e.organization_id);
      const list = byOrganization.get(organizationId) ?? byOrganization.set(organizationId, []).get(organizationId)!;
      list.push({
        event: type as WebhookEvent['event'],
        occurredAt: toDate(e.event_at) ?? undefined,
        data: {
          message_id: toInt(e.message_id),
          subscriber_id: toInt(e.subscriber_id),
          email: e.recipient ?? null,
          provider: e.provider,
          provider_event_id: e.provider_event_id,
          ...(type === 'bounced' ? { bounce: e.bounce ?? 'hard' } : {}),
        },
      });
    }
    for (const [organizationId, list] of byOrganization) await this.webhooks.emit(trx, organizationId, list);
  }
}
