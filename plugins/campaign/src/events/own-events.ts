import type { Knex } from 'knex';
import { addToTimelines } from './timelines';

/** Events of our own (not a provider's) recorded beside theirs, so statistics rebuild from records alone. */
export const OWN_PROVIDER = 'switchboard';

/**
 * Records an unsubscribe through a mail's own link as an event of its message, inside the transaction that
 * counts it: once per message and subscriber.
 */
export async function recordLinkUnsubscribe(
  trx: Knex.Transaction,
  ids: { organizationId: number; messageId: number; subscriberId: number },
  now: Date,
): Promise<void> {
  const event = {
    organization_id: ids.organizationId,
    webhook_endpoint_id: null,
    provider: OWN_PROVIDER,
    provider_event_id: `unsubscribe-link:${ids.messageId}:${ids.subscriberId}`,
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
  };
  await trx('inbound_events').insert(event).onConflict(['organization_id', 'provider', 'provider_event_id']).ignore();
  await addToTimelines(trx, [event]);
}
