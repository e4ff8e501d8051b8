import type { Knex } from 'knex';
import { toDate, toInt } from '@switchboard/core';
import type { EventType } from '@switchboard/provider-kit';
import { COUNTERS, FIRSTS } from './mail-event';

const PAGE = 5_000;
/** A provider's recorded events the ledger counts, when it found their message and subscriber. */
const RECORDED_COUNTED = ['delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed'] as const;

/**
 * A stored mail event as the ledger counted it: an `event` adds to its COUNTERS and its timeline when it
 * occurred; a mail's `first` open or click (its mark) to the unique figures (FIRSTS), when counted.
 */
export interface CountedEvent {
  type: EventType;
  kind: 'event' | 'first';
  messageId: number;
  subscriberId: number;
  countedAt: Date;
  occurredAt: Date;
}

/** The message counters a replayed event adds 1 to. */
export const messageCounterOf = (e: CountedEvent): string =>
  e.kind === 'first' ? FIRSTS[e.type as keyof typeof FIRSTS].message : COUNTERS[e.type]!.message;

type Row = Record<string, unknown>;

/**
 * Replays what the ledger counted, from the stored records alone, for the rebuilds: each real send's
 * mail when it was sent (sent_at), each mail's first open and click when marked (opened_at, clicked_at),
 * every open and click our tracking recorded (tracked_events), and each provider's delivery, open, click,
 * bounce, complaint and unsubscribe that found its message and subscriber (our own link's unsubscribes
 * among them), counted when received and shown when it occurred.
 * Of an organization, or of one of its messages.
 */
export async function replayCounted(
  knex: Knex | Knex.Transaction,
  scope: { organizationId: number; messageId?: number },
  each: (event: CountedEvent) => void,
): Promise<void> {
  const sends: Row[] = await knex('message_sends')
    .where({ organization_id: scope.organizationId, ...(scope.messageId ? { message_id: scope.messageId } : {}) })
    .orderBy('id')
    .select('id', 'message_id', 'test_mode');
  for (const send of sends) {
    const messageId = toInt(send.message_id);
    const real = !send.test_mode;
    const stamp = (type: EventType, kind: CountedEvent['kind'], subscriber: unknown, at: unknown) => {
      const countedAt = toDate(at);
      if (countedAt) each({ type, kind, messageId, subscriberId: toInt(subscriber), countedAt, occurredAt: countedAt });
    };
    await pages(
      knex('send_recipients').where('send_id', send.id as number),
      'subscriber_id',
      ['subscriber_id', 'sent_at', 'opened_at', 'clicked_at'],
      (r) => {
        if (real) stamp('sent', 'event', r.subscriber_id, r.sent_at);
        stamp('opened', 'first', r.subscriber_id, r.opened_at);
        stamp('clicked', 'first', r.subscriber_id, r.clicked_at);
      },
    );
    await pages(
      knex('tracked_events').where('send_id', send.id as number),
      'id',
      ['id', 'subscriber_id', 'event_type', 'occurred_at'],
      (r) => stamp(r.event_type as EventType, 'event', r.subscriber_id, r.occurred_at),
    );
  }
  await pages(
    knex('inbound_events')
      .where({ organization_id: scope.organizationId, ...(scope.messageId ? { message_id: scope.messageId } : {}) })
      .whereNotNull('message_id')
      .whereNotNull('subscriber_id')
      .whereIn('event_type', RECORDED_COUNTED),
    'id',
    ['id', 'message_id', 'subscriber_id', 'event_type', 'event_at', 'received_at'],
    (r) =>
      each({
        type: r.event_type as EventType,
        kind: 'event',
        messageId: toInt(r.message_id),
        subscriberId: toInt(r.subscriber_id),
        countedAt: toDate(r.received_at)!,
        occurredAt: toDate(r.event_at) ?? new Date(0),
      }),
  );
}

/** Reads a query's rows a page at a time, in the order of a unique column (`key`, `table.key` in a join: read as `key`). */
export async function pages(
  query: Knex.QueryBuilder,
  key: string,
  columns: string[],
  each: (row: Row) => void,
): Promise<void> {
  for (let after = 0; ;) {
    const rows: Row[] = await query.clone().andWhere(key, '>', after).orderBy(key).limit(PAGE).select(columns);
    rows.forEach(each);
    if (rows.length < PAGE) break;
    after = toInt(rows[rows.length - 1][key.split('.').pop()!]);
  }
}
