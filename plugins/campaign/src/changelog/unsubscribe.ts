import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppConfig, Clock, SERVICES } from '@switchboard/core';
import { LinkSigner } from '../shared/link-signer';
import { CHANGELOG_UNSUBSCRIBE_PATH } from '../shared/paths';
import type { Unsubscribable } from '../shared/unsubscribe-pages';
import { subscriptionOfLink } from './subscription-links';

const PURPOSE = 'changelog-unsubscribe';

/** The unsubscribe link of a changelog notice mail: signed for one subscription. */
@injectable()
export class ChangelogUnsubscribe implements Unsubscribable {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Config) private readonly config: AppConfig,
    @inject(LinkSigner) private readonly signer: LinkSigner,
  ) {}

  async link(subscriptionId: number): Promise<string> {
    return `${this.config.publicUrl}${CHANGELOG_UNSUBSCRIBE_PATH}?token=${await this.signer.sign(PURPOSE, [subscriptionId])}`;
  }

  async describe(token: string): Promise<{ email: string; unsubscribed: boolean }> {
    const { email, address } = await this.subscription(token);
    return { email, unsubscribed: address.unsubscribed_at !== null };
  }

  /**
   * Stops every notice to the address's subscriptions in the organization, as the page says ("receives no
   * more changelog notices"; until session 36 its other webhook urls went on mailing it). Pending notices
   * are dropped when their turn comes.
   */
  async unsubscribe(token: string): Promise<{ email: string }> {
    const { email, address } = await this.subscription(token);
    await this.knex('changelog_addresses')
      .where({ id: address.id })
      .whereNull('unsubscribed_at')
      .update({ unsubscribed_at: this.clock.now() });
    return { email };
  }

  private subscription(token: string) {
    return subscriptionOfLink(this.knex, this.signer, PURPOSE, token);
  }
}
