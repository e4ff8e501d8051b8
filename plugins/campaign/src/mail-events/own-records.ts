import type { Knex } from 'knex';
import { isUniqueViolation } from '@switchboard/core';

/** Events of our own (not a provider's) recorded beside theirs, so statistics rebuild from records alone. */
export const OWN_PROVIDER = 'switchboard';

/**
 * Records an unsubscribe through a mail's own link as an event of its message: once per message and
 * subscriber. Returns whether this call recorded it (false: recorded before, by an earlier unsubscribe).
 */
export async function recordLinkUnsubscribe(
  trx: Knex.Transaction,
  ids: { organizationId: number; messageId: number; subscriberId: number },
  now: Date,
): Promise<boolean> {
  const key = {
    organization_id: ids.organizationId,
    provider: OWN_PROVIDER,
    provider_event_id: `unsubscribe-link:${ids.messageId}:${ids.subscriberId}`,
  };
  if (await trx('inbound_events').where(key).first('id')) return false;
  // Another process may record it between the read and the insert (its commit past this transaction's
  // snapshot): the key's unique index tells, and this one was recorded before.
  return trx('inbound_events')
    .insert({
      ...key,
      webhook_endpoint_id: null,
      message_id: ids.messageId,
      subscriber_id: ids.subscriberId,
      recipient: null,
      event_type: 'unsubscribed',
      bounce: null,
      provider_message_id: null,
      payload: JSON.stringify({ via: 'unsubscribe link' }),
      event_at: now,
      received_at: now,
      receipt: 'unsubscribe-link',
    })
    .then(
      () => true,
      (err: unknown) => {
        if (isUniqueViolation(err)) return false;
        throw err;
      },
    );
}

const TRACKED_CHUNK = 500;

/**
 * Records every counted open and click our tracking saw, by its mail and when it happened: what a rebuild
 * counts them from (a provider's opens and clicks are its recorded events).
 */
export async function recordTracked(
  trx: Knex.Transaction,
  counted: Array<{
    type: string;
    source: { kind: string };
    sendId?: number;
    subscriberId: number | null;
    occurredAt: Date;
  }>,
): Promise<void> {
  const rows = counted
    .filter((e) => e.source.kind === 'tracking' && (e.type === 'opened' || e.type === 'clicked'))
    .map((e) => ({
      send_id: e.sendId!,
      subscriber_id: e.subscriberId!,
      event_type: e.type,
      occurred_at: e.occurredAt,
    }));
  for (let i = 0; i < rows.length; i += TRACKED_CHUNK)
    await trx('tracked_events').insert(rows.slice(i, i + TRACKED_CHUNK));
}
