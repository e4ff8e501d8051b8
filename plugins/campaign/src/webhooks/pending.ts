import type { Knex } from 'knex';

/** Far enough ahead that the due index never meets the row: an inactive subscription's deliveries wait here. */
export const PARKED = new Date('9999-01-01T00:00:00.000Z');

/**
 * Inactive subscriptions' pending deliveries (of `deliveryIds` alone, when given) wait, out of the
 * dispatcher's way; only while they are still inactive, so a park racing an activation leaves the
 * deliveries due. A try in flight when its subscription was deactivated ends after the park: its retry is
 * parked again (else its back-off left it out of what activation sends at once).
 */
export const parkPending = (trx: Knex | Knex.Transaction, webhookIds: number[], deliveryIds?: number[]) => {
  const pending = trx('webhook_deliveries')
    .whereIn('webhook_id', webhookIds)
    .andWhere('state', 'pending')
    .whereIn('webhook_id', trx('webhooks').select('id').whereIn('id', webhookIds).andWhere('active', false));
  return (deliveryIds ? pending.whereIn('id', deliveryIds) : pending).update({ next_attempt_at: PARKED });
};

/**
 * Activated again: what it had parked is due at once. A row not parked is a try in flight (its due time
 * moved past the try) or one waiting its back-off: making it due sent a delivery in flight a second
 * time (session 26); it comes when due.
 */
export const unparkPending = (trx: Knex | Knex.Transaction, webhookId: number, now: Date) =>
  trx('webhook_deliveries')
    .where({ webhook_id: webhookId, state: 'pending', next_attempt_at: PARKED })
    .update({ next_attempt_at: now });
