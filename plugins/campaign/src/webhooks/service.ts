import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  Clock,
  deleteOwnedRow,
  insertedId,
  notFound,
  OutboundGuard,
  ownedRow,
  parseJson,
  rowMapper,
  SecretBox,
  SERVICES,
  toBool,
  validationError,
} from '@switchboard/core';
import { keyOfSecret, MIN_KEY_BYTES, whsecOf } from '../shared/standard-webhooks';
import { assertReceiverUrl } from '../shared/receiver-url';
import { webhookSchema, type NewWebhook, type Webhook, type WebhookChanges } from './schemas';
import type { WebhookEventName } from './event-names';
import { parkPending, unparkPending } from './pending';
import { WebhookWake } from './wake';

const toWebhook = rowMapper(webhookSchema, {
  events: (row) => parseJson<WebhookEventName[]>(row.events, []),
  has_secret: () => true,
  secret: () => undefined,
});
const COLUMNS = [...toWebhook.columns, 'events'];

/** Each organization's outbound webhook subscriptions; their secrets are sealed at rest. */
@injectable()
export class WebhooksService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.SecretBox) private readonly secrets: SecretBox,
    @inject(SERVICES.OutboundGuard) private readonly guard: OutboundGuard,
    @inject(WebhookWake) private readonly wake: WebhookWake,
  ) {}

  private show(row: Record<string, unknown>, plainSecret?: string): Webhook {
    const { secret: _hidden, ...webhook } = toWebhook(row);
    return plainSecret === undefined ? webhook : { ...webhook, secret: plainSecret };
  }

  private async row(orgId: number, id: number) {
    return ownedRow(this.knex, 'webhooks', orgId, id, COLUMNS, 'Webhook');
  }

  async all(orgId: number): Promise<Webhook[]> {
    const rows = await this.knex('webhooks').where({ organization_id: orgId }).orderBy('id').select(COLUMNS);
    return rows.map((r: Record<string, unknown>) => this.show(r));
  }

  async get(orgId: number, id: number): Promise<Webhook> {
    return this.show(await this.row(orgId, id));
  }

  async create(orgId: number, input: NewWebhook): Promise<Webhook> {
    assertReceiverUrl(this.guard, 'url', input.url);
    assertSigningKey(input.secret);
    const now = this.clock.now();
    const secret = input.secret ?? whsecOf(crypto.randomBytes(32));
    const id = insertedId(
      await this.knex('webhooks').insert({
        organization_id: orgId,
        name: input.name,
        url: input.url,
        events: JSON.stringify(input.events),
        secret: this.secrets.seal(secret),
        active: input.active,
        created_at: now,
        updated_at: now,
      }),
    );
    return this.show(await this.row(orgId, id), secret);
  }

  /**
   * Activating a subscription (again) clears why it was deactivated and its run of failures, and sends
   * what waited meanwhile; deactivating it keeps its pending deliveries waiting.
   */
  async update(orgId: number, id: number, input: WebhookChanges): Promise<Webhook> {
    const { secret, events, ...fields } = input;
    if (fields.url !== undefined) assertReceiverUrl(this.guard, 'url', fields.url);
    assertSigningKey(secret);
    const now = this.clock.now();
    const activated = await this.knex.transaction(async (trx) => {
      const current = await trx('webhooks').where({ organization_id: orgId, id }).forUpdate().first('active');
      if (!current) throw notFound('Webhook', id);
      const wasActive = toBool(current.active);
      // Only a change of state counts: a client echoing `active: true` back resets nothing.
      const activating = fields.active === true && !wasActive;
      await trx('webhooks')
        .where({ organization_id: orgId, id })
        .update({
          ...fields,
          ...(events !== undefined ? { events: JSON.stringify(events) } : {}),
          ...(secret !== undefined ? { secret: this.secrets.seal(secret) } : {}),
          ...(activating ? { disabled_reason: null, failures_in_row: 0, failing_since: null } : {}),
          updated_at: now,
        });
      if (activating) await unparkPending(trx, id, now);
      if (fields.active === false && wasActive) await parkPending(trx, [id]);
      return activating;
    });
    if (activated) this.wake.now();
    return this.show(await this.row(orgId, id), secret);
  }

  async delete(orgId: number, id: number): Promise<void> {
    await deleteOwnedRow(this.knex, 'webhooks', orgId, id, 'Webhook');
  }
}

/**
 * A secret given must make a key of MIN_KEY_BYTES at least (`whsec_!!!!...` made none: anyone could sign);
 * that a `whsec_` one is base64 as receivers' libraries read it, its schema says (STANDARD_BASE64).
 */
function assertSigningKey(secret: string | undefined): void {
  if (secret !== undefined && keyOfSecret(secret).length < MIN_KEY_BYTES)
    throw validationError(
      'secret',
      'minLength',
      `secret must give a key of at least ${MIN_KEY_BYTES} bytes (after whsec_, that many bytes as base64)`,
    );
}
