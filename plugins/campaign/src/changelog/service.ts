import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, isUniqueViolation, rowMapper, SERVICES } from '@switchboard/core';
import { normalizeEmail } from '../shared/email';
import { changelogSubscriptionSchema, type ChangelogSubscribe, type ChangelogSubscription } from './schemas';

const toSubscription = rowMapper(changelogSubscriptionSchema);

/**
 * The unique key's url part: the url's SHA-256, or '' for a subscription by email alone (a NULL would
 * never collide in a unique index, so the same email could subscribe twice).
 */
const urlKey = (url: string | undefined) => (url ? crypto.createHash('sha256').update(url).digest('hex') : '');

/**
 * Who wants to hear of API changes, by email and optionally a webhook url; subscribing twice with the
 * same email and url (or the same email and none) answers the first subscription.
 */
@injectable()
export class ChangelogService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async subscribe(
    orgId: number,
    input: ChangelogSubscribe,
  ): Promise<{ created: boolean; subscription: ChangelogSubscription }> {
    const key = {
      organization_id: orgId,
      email: normalizeEmail(input.email),
      webhook_url_hash: urlKey(input.webhook_url),
    };
    let created = false;
    try {
      await this.knex('changelog_subscriptions').insert({
        ...key,
        webhook_url: input.webhook_url ?? null,
        created_at: this.clock.now(),
      });
      created = true;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const row = await this.knex('changelog_subscriptions').where(key).first(toSubscription.columns);
    return { created, subscription: toSubscription(row) };
  }
}
