import type { Knex } from 'knex';

/** Far enough ahead that the due index never meets the row: an inactive subscription's deliveries wait here. */
export const PARKED = new Date('9999-01-01T00:00:00.000Z');

/**
 * An inactive subscription's pending deliveries wait, out of the dispatcher's way; only while it is
 * still inactive, so a park racing its activation leaves the deliveries due.
 */
export const parkPending = (trx: Knex | Knex.Transaction, webhookId: number) =>
  trx('webhook_deliveries')
    .where({ webhook_id: webhookId, state: 'pending' })
    .whereIn('webhook_id', trx('webhooks').select('id').where({ id: webhookId, active: false }))
    .update({ next_attempt_at: PARKED });

/**
 * Deliveries tried again later whose subscription is inactive by now wait parked: a try in flight when
 * its subscription was deactivated (and its deliveries parked) ends after it, and its back-off would
 * have left it out of what activation sends at once.
 */
export const parkRetriesOfInactive = (trx: Knex | Knex.Transaction, deliveryIds: number[], webhookIds: number[]) =>
  trx('webhook_deliveries')
    .whereIn('id', deliveryIds)
    .andWhere('state', 'pending')
    .whereIn('webhook_id', trx('webhooks').select('id').whereIn('id', webhookIds).andWhere('active', false))
    .update({ next_attempt_at: PARKED });

/**
 * Activated again: what it had parked is due at once. A row not parked is a try in flight (its due time
 * moved past the try) or one waiting its back-off: making it due sent a delivery in flight a second
 * time (session 26); it comes when due.
 */
export const unparkPending = (trx: Knex | Knex.Transaction, webhookId: number, now: Date) =>
  trx('webhook_deliveries')
    .where({ webhook_id: webhookId, state: 'pending', next_attempt_at: PARKED })
    .update({ next_attempt_at: now });
