import type { Knex } from 'knex';

/** Far enough ahead that the due index never meets the row: an inactive subscription's deliveries wait here. */
export const PARKED = new Date('9999-01-01T00:00:00.000Z');

/** An inactive subscription's pending deliveries wait, out of the dispatcher's way... */
export const parkPending = (trx: Knex | Knex.Transaction, webhookId: number) =>
  trx('webhook_deliveries').where({ webhook_id: webhookId, state: 'pending' }).update({ next_attempt_at: PARKED });

/** ...until it is active again: then they are all due at once (a try that ended after the parking too). */
export const unparkPending = (trx: Knex | Knex.Transaction, webhookId: number, now: Date) =>
  trx('webhook_deliveries').where({ webhook_id: webhookId, state: 'pending' }).update({ next_attempt_at: now });
