import type { Knex } from 'knex';
import { toDate, toInt } from '@switchboard/core';
import type { EventType } from '@switchboard/provider-kit';

const PAGE = 5_000;
/** Recorded events the ledger counts as they are (opens and clicks count by the mails' first marks instead). */
const RECORDED_OUTCOMES = ['delivered', 'bounced', 'complained', 'unsubscribed'] as const;

/** A stored mail event as the ledger counted it, and when. */
export interface CountedEvent {
  type: EventType;
  messageId: number;
  subscriberId: number;
  countedAt: Date;
}

type Row = Record<string, unknown>;

/**
 * Replays what the ledger counted, from the stored records alone, for the rebuilds: each real send's
 * mail when it was sent (sent_at), each mail's first open and click when marked (opened_at, clicked_at),
 * and each recorded delivery, bounce, complaint and unsubscribe that found its mail, when received.
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
    await pages(
      knex('send_recipients').where('send_id', send.id as number),
      'subscriber_id',
      ['subscriber_id', 'sent_at', 'opened_at', 'clicked_at'],
      (r) => {
        const subscriberId = toInt(r.subscriber_id);
        const stamp = (type: EventType, at: unknown) => {
          const countedAt = toDate(at);
          if (countedAt) each({ type, messageId, subscriberId, countedAt });
        };
        if (real) stamp('sent', r.sent_at);
        stamp('opened', r.opened_at);
        stamp('clicked', r.clicked_at);
      },
    );
  }
  await pages(
    knex('inbound_events')
      .where({ organization_id: scope.organizationId, ...(scope.messageId ? { message_id: scope.messageId } : {}) })
      .whereNotNull('message_id')
      .whereNotNull('subscriber_id')
      .whereIn('event_type', RECORDED_OUTCOMES),
    'id',
    ['id', 'message_id', 'subscriber_id', 'event_type', 'received_at'],
    (r) =>
      each({
        type: r.event_type as EventType,
        messageId: toInt(r.message_id),
        subscriberId: toInt(r.subscriber_id),
        countedAt: toDate(r.received_at)!,
      }),
  );
}

/** Reads a query's rows a page at a time, in the order of a unique column. */
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
    after = toInt(rows[rows.length - 1][key]);
  }
}
