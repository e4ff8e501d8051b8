import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  Clock,
  isForeignKeyViolation,
  ownedRow,
  rowMapper,
  SecretBox,
  SERVICES,
  toIso,
  toText,
} from '@switchboard/core';
import { keyOfSecret } from '../shared/standard-webhooks';
import { WebhookDispatcher } from './dispatcher';
import { TEST_EVENT } from './event-names';
import { newEventId, webhookBody } from './outbox';
import { deliverySchema, type Delivery, type DeliveryQuery, type TestDelivery } from './schemas';

const toDelivery = rowMapper(deliverySchema, {
  next_attempt_at: (row) => (row.state === 'pending' ? toIso(row.next_attempt_at) : null),
});
const COLUMNS = [...toDelivery.columns, 'next_attempt_at'];

/** A subscription's delivery log, newest first, and its test delivery. */
@injectable()
export class WebhookDeliveries {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.SecretBox) private readonly secrets: SecretBox,
    @inject(WebhookDispatcher) private readonly dispatcher: WebhookDispatcher,
  ) {}

  async log(orgId: number, webhookId: number, q: DeliveryQuery): Promise<{ items: Delivery[]; total: number }> {
    await ownedRow(this.knex, 'webhooks', orgId, webhookId, ['id'], 'Webhook');
    const filtered = this.knex('webhook_deliveries').where({ webhook_id: webhookId });
    if (q.state) filtered.andWhere({ state: q.state });
    const [{ total }] = await filtered.clone().count({ total: '*' });
    const rows = await filtered
      .orderBy('id', 'desc')
      .limit(q.per_page)
      .offset((q.page - 1) * q.per_page)
      .select(COLUMNS);
    return { items: rows.map(toDelivery), total: Number(total) };
  }

  /**
   * Sends a signed `webhook.test` event now and answers what the receiver answered; the try is written
   * to the log, finished either way (a test is not tried again).
   */
  async test(orgId: number, webhookId: number): Promise<TestDelivery> {
    const row = await ownedRow(this.knex, 'webhooks', orgId, webhookId, ['id', 'name', 'url', 'secret'], 'Webhook');
    const now = this.clock.now();
    const eventId = newEventId();
    const body = webhookBody(eventId, TEST_EVENT, now, {
      webhook_id: webhookId,
      name: toText(row.name),
      message: 'A test event: this receiver is set up to take Switchboard webhooks.',
    });
    const key = keyOfSecret(this.secrets.open(toText(row.secret)));
    const outcome = await this.dispatcher.post(toText(row.url), key, eventId, body);
    const delivered = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const error = outcome.error ?? (delivered ? null : `the receiver answered ${outcome.status}`);
    // Deleted while the test ran: its answer stands, its log went with it (the row's foreign key refuses it).
    await this.knex('webhook_deliveries')
      .insert({
        organization_id: orgId,
        webhook_id: webhookId,
        event_id: eventId,
        event: TEST_EVENT,
        body,
        state: delivered ? 'delivered' : 'failed',
        attempts: 1,
        next_attempt_at: now,
        response_status: outcome.status,
        latency_ms: outcome.latencyMs,
        last_error: error?.slice(0, 255) ?? null,
        created_at: now,
        finished_at: this.clock.now(),
      })
      .catch((err: unknown) => {
        if (!isForeignKeyViolation(err)) throw err;
      });
    return {
      event_id: eventId,
      delivered,
      response_status: outcome.status,
      latency_ms: outcome.latencyMs,
      error: outcome.error,
    };
  }
}
