import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, isUniqueViolation, OutboundGuard, rowMapper, SERVICES } from '@switchboard/core';
import { assertReceiverUrl } from '../shared/receiver-url';
import { normalizeEmail } from '../shared/email';
import { changelogSubscriptionSchema, type ChangelogSubscribe, type ChangelogSubscribed } from './schemas';
import { ChangelogSecrets } from './secrets';
import { ChangelogConsent } from './consent';
import { addressOf, isConfirmed } from './addresses';

const toSubscription = rowMapper(changelogSubscriptionSchema);

/**
 * The unique key's url part: the url's SHA-256, or '' for a subscription by email alone (a NULL would
 * never collide in a unique index, so the same email could subscribe twice).
 */
const urlKey = (url: string | undefined) => (url ? crypto.createHash('sha256').update(url).digest('hex') : '');

/**
 * Who wants to hear of API changes, by email and optionally a webhook url; subscribing twice with the
 * same email and url (or the same email and none) answers the first subscription. Nothing is sent before the
 * address confirms (ChangelogConsent): its consent is the address's, shared by its subscriptions.
 */
@injectable()
export class ChangelogService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(ChangelogSecrets) private readonly secrets: ChangelogSecrets,
    @inject(SERVICES.OutboundGuard) private readonly guard: OutboundGuard,
    @inject(ChangelogConsent) private readonly consent: ChangelogConsent,
  ) {}

  async subscribe(
    orgId: number,
    input: ChangelogSubscribe,
  ): Promise<{ created: boolean; subscription: ChangelogSubscribed }> {
    if (input.webhook_url) assertReceiverUrl(this.guard, 'webhook_url', input.webhook_url);
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
    const row = await this.knex('changelog_subscriptions')
      .where(key)
      .first([...toSubscription.columns, 'organization_id', 'address_id']);
    const subscription = toSubscription(row);
    const address = await addressOf(this.knex, row);
    // Not confirmed yet, or unsubscribed through a notice's link: the address is asked (again), and gets
    // nothing until it confirms; subscribing again never undoes its own unsubscribe.
    const confirmed = isConfirmed(address);
    if (!confirmed) await this.consent.ask(subscription.id, address.id);
    const signing_secret = subscription.webhook_url ? await this.secrets.secretOf(subscription.id) : null;
    return { created, subscription: { ...subscription, signing_secret, confirmed } };
  }
}
