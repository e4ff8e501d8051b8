import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, insertedId, isUniqueViolation, toInt, toIsoRequired, toText, SERVICES } from '@switchboard/core';
import { normalizeEmail } from '../shared/email';
import type { ChangelogSubscribe, ChangelogSubscription } from './schemas';

/** Who wants to hear of API changes; subscribing twice with the same pair answers the first one. */
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
    const email = normalizeEmail(input.email);
    const hash = crypto.createHash('sha256').update(input.webhook_url).digest('hex');
    const key = { organization_id: orgId, email, webhook_url_hash: hash };
    let created = false;
    try {
      await this.knex('changelog_subscriptions')
        .insert({ ...key, webhook_url: input.webhook_url, created_at: this.clock.now() })
        .then(insertedId);
      created = true;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    const row = await this.knex('changelog_subscriptions').where(key).first('id', 'email', 'webhook_url', 'created_at');
    return {
      created,
      subscription: {
        id: toInt(row.id),
        email: toText(row.email),
        webhook_url: toText(row.webhook_url),
        created_at: toIsoRequired(row.created_at),
      },
    };
  }
}
