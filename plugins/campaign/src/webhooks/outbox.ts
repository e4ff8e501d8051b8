import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, isForeignKeyViolation, parseJson, selectText, SERVICES, toInt } from '@switchboard/core';
import type { WebhookEventName } from './event-names';
import { WebhookWake } from './wake';

/** Something that happened, as a subscription hears of it: `data` is the event's own payload. */
export interface WebhookEvent {
  event: WebhookEventName;
  data: Record<string, unknown>;
  /** Default: now. */
  occurredAt?: Date;
}

const INSERT_CHUNK = 500;

/** The `subscriber.created` event of a new subscriber. */
export const subscriberCreated = (s: { id: number; email: string; status: string }, at: Date): WebhookEvent => ({
  event: 'subscriber.created',
  occurredAt: at,
  data: { subscriber_id: s.id, email: s.email, status: s.status },
});

/** A new event id: the body's `id` and the `webhook-id` of every try, to every subscription. */
export const newEventId = () => `evt_${crypto.randomBytes(12).toString('base64url')}`;

/** The delivered body (Standard Webhooks' shape): `{id, event, occurred_at, data}`. */
export const webhookBody = (id: string, event: string, occurredAt: Date, data: Record<string, unknown>) =>
  JSON.stringify({ id, event, occurred_at: occurredAt.toISOString(), data });

/**
 * Writes a delivery row per event and active subscription that wants it, inside the transaction of the
 * change the events tell of: committed together, or not at all. The dispatcher is woken once the
 * transaction has committed. Costs one indexed read when the organization has no subscription.
 */
@injectable()
export class WebhookOutbox {
  constructor(
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(WebhookWake) private readonly wake: WebhookWake,
  ) {}

  async emit(trx: Knex.Transaction, organizationId: number, events: WebhookEvent[]): Promise<void> {
    if (!events.length) return;
    const subscriptions = await selectText(
      trx,
      'select `id`, `events` from `webhooks` where `organization_id` = ? and `active` = ?',
      [organizationId, true],
    );
    if (!subscriptions.length) return;
    const wanting = subscriptions.map((s) => ({
      id: toInt(s.id),
      events: new Set(parseJson<string[]>(s.events, [])),
    }));
    const now = this.clock.now();
    const rows = events.flatMap((e) => {
      const listeners = wanting.filter((w) => w.events.has(e.event));
      if (!listeners.length) return [];
      const id = newEventId();
      const body = webhookBody(id, e.event, e.occurredAt ?? now, e.data);
      return listeners.map((w) => ({
        organization_id: organizationId,
        webhook_id: w.id,
        event_id: id,
        event: e.event,
        body,
        state: 'pending',
        attempts: 0,
        next_attempt_at: now,
        created_at: now,
      }));
    });
    if (!rows.length) return;
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) await this.insert(trx, rows.slice(i, i + INSERT_CHUNK));
    trx.executionPromise.then(
      () => this.wake.now(),
      () => undefined,
    );
  }

  /**
   * A subscription deleted after it was read here fails the insert on its foreign key; that must not fail
   * the change being recorded (a send's outcomes, an import): its rows are dropped, the others written.
   * The failed statement alone is undone on both databases, not the transaction.
   */
  private async insert(trx: Knex.Transaction, rows: Array<{ webhook_id: number }>): Promise<void> {
    try {
      await trx('webhook_deliveries').insert(rows);
    } catch (err) {
      if (!isForeignKeyViolation(err)) throw err;
      const ids = [...new Set(rows.map((r) => r.webhook_id))];
      const left = new Set((await trx('webhooks').whereIn('id', ids).pluck('id')).map(Number));
      const kept = rows.filter((r) => left.has(r.webhook_id));
      if (kept.length) await trx('webhook_deliveries').insert(kept);
    }
  }
}
