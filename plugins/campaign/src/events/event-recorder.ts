import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, SERVICES, toInt, transactionWithRetry } from '@switchboard/core';
import { addToTimelines } from './timelines';
import type { EventType, NormalizedEvent } from '@switchboard/provider-kit';
import { SubscriberWriter } from '../audience/subscribers/writer';
import { normalizeEmail } from '../shared/email';
import type { SubscriberStatus } from '../shared/subscriber-statuses';
import type { ReceivingEndpoint } from './inbound-webhooks/service';

/** The message counter each event type adds to (opens and clicks count once per recipient, below). */
const COUNTERS: Partial<Record<EventType, string>> = {
  delivered: 'count_delivered',
  bounced: 'count_bounced',
  unsubscribed: 'count_stop',
  complained: 'count_complained',
};
const INSERT_CHUNK = 500;

interface RecordedEvent {
  message_id: unknown;
  subscriber_id: unknown;
  event_type: string;
  bounce: unknown;
  event_at: unknown;
}

/** The status an event moves its subscriber to: a hard bounce bounced, an unsubscribe or complaint unsubscribed. */
function statusAfter(event: RecordedEvent): SubscriberStatus | null {
  if (event.event_type === 'bounced') return event.bounce === 'soft' ? null : 'bounced';
  if (event.event_type === 'unsubscribed' || event.event_type === 'complained') return 'unsubscribed';
  return null;
}

/**
 * Records a verified request's events and applies them (campaign spec §6): each event is written once
 * per (organization, provider, provider event id) with the message and subscriber it is linked to, and
 * only the events this request wrote change counters and statuses, so a provider's retry changes nothing.
 */
@injectable()
export class InboundEventRecorder {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SubscriberWriter) private readonly writer: SubscriberWriter,
  ) {}

  async record(
    endpoint: ReceivingEndpoint,
    provider: string,
    events: NormalizedEvent[],
  ): Promise<{ received: number; recorded: number }> {
    if (!events.length) return { received: 0, recorded: 0 };
    const orgId = endpoint.organizationId;
    const linked = await this.link(orgId, events);
    const receipt = crypto.randomBytes(12).toString('hex');
    const now = this.clock.now();
    const rows = linked.map((e) => ({
      organization_id: orgId,
      webhook_endpoint_id: endpoint.id,
      provider,
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
    const recorded = await transactionWithRetry(this.knex, async (trx) => {
      for (let i = 0; i < rows.length; i += INSERT_CHUNK)
        await trx('inbound_events')
          .insert(rows.slice(i, i + INSERT_CHUNK))
          .onConflict(['organization_id', 'provider', 'provider_event_id'])
          .ignore();
      const mine: RecordedEvent[] = await trx('inbound_events')
        .where({ organization_id: orgId, provider, receipt })
        .select('message_id', 'subscriber_id', 'event_type', 'bounce', 'event_at');
      await this.countOnMessages(
        trx,
        mine.filter((e) => e.message_id !== null && e.subscriber_id !== null),
      );
      await addToTimelines(
        trx,
        mine.filter((e) => e.message_id !== null),
      );
      return mine;
    });
    // Status changes go through the writer (counters, lists and search rows follow); setting a status
    // a subscriber has already changes nothing.
    for (const event of recorded) {
      const status = statusAfter(event);
      if (status && event.message_id !== null && event.subscriber_id !== null)
        await this.writer.setStatus(orgId, toInt(event.subscriber_id), status, {
          ...(status === 'unsubscribed' ? { unsubscribe_reason: `${provider} ${event.event_type}` } : {}),
        });
    }
    return { received: events.length, recorded: recorded.length };
  }

  /**
   * Our ids where they belong to the endpoint's organization (another organization's ids are dropped),
   * else the subscriber of the recipient address in that organization.
   */
  private async link(orgId: number, events: NormalizedEvent[]): Promise<NormalizedEvent[]> {
    const owned = async (table: string, ids: Array<number | null>) => {
      const wanted = [...new Set(ids.filter((id): id is number => id !== null))];
      if (!wanted.length) return new Set<number>();
      const rows = await this.knex(table).where({ organization_id: orgId }).whereIn('id', wanted).select('id');
      return new Set(rows.map((r: { id: unknown }) => toInt(r.id)));
    };
    const messages = await owned(
      'messages',
      events.map((e) => e.messageId),
    );
    const subscribers = await owned(
      'subscribers',
      events.map((e) => e.subscriberId),
    );
    const addresses = [
      ...new Set(events.filter((e) => e.subscriberId === null && e.recipient).map((e) => normalizeEmail(e.recipient!))),
    ];
    const byEmail = new Map<string, number>();
    if (addresses.length)
      for (const r of await this.knex('subscribers')
        .where({ organization_id: orgId })
        .whereIn('email', addresses)
        .select('id', 'email'))
        byEmail.set(String(r.email), toInt(r.id));
    return events.map((e) => ({
      ...e,
      messageId: e.messageId !== null && messages.has(e.messageId) ? e.messageId : null,
      subscriberId:
        e.subscriberId !== null
          ? subscribers.has(e.subscriberId)
            ? e.subscriberId
            : null
          : (byEmail.get(e.recipient ? normalizeEmail(e.recipient) : '') ?? null),
    }));
  }

  /**
   * The message counters, a statement per (message, counter). Opens and clicks count once per
   * recipient, as tracked opens and clicks do (a click is an open too): the first marks the recipient's
   * row of the message's send.
   */
  private async countOnMessages(trx: Knex.Transaction, events: RecordedEvent[]): Promise<void> {
    const increments = new Map<string, number>();
    const add = (table: string, id: number, column: string) => {
      const key = `${table}\u0000${id}\u0000${column}`;
      increments.set(key, (increments.get(key) ?? 0) + 1);
    };
    for (const e of events) {
      const column = COUNTERS[e.event_type as EventType];
      if (column) add('messages', toInt(e.message_id), column);
    }
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
        const [message, subscriber] =
          column === 'opened_at' ? ['count_read', 'messages_opened'] : ['count_clicked', 'messages_clicked'];
        add('messages', toInt(r.message_id), message);
        add('subscribers', toInt(r.subscriber_id), subscriber);
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
    for (const [group, ids] of grouped) {
      const [table, column, n] = group.split('\u0000');
      await trx(table).whereIn('id', ids).increment(column, Number(n));
    }
  }
}
