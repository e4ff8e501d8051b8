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

/** Activated again: everything it had pending is due at once (a try that ended after the parking too). */
export const unparkPending = (trx: Knex | Knex.Transaction, webhookId: number, now: Date) =>
  trx('webhook_deliveries').where({ webhook_id: webhookId, state: 'pending' }).update({ next_attempt_at: now });
