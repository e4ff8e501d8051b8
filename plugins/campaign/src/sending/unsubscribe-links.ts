import { inject, injectable } from 'tsyringe';
import { AppConfig, SERVICES } from '@switchboard/core';
import { LinkSigner } from '../shared/link-signer';
import { UNSUBSCRIBE_PATH } from '../shared/paths';

const PURPOSE = 'unsubscribe';

/** The one-click unsubscribe link of a mail: signed for one organization, message and subscriber. */
@injectable()
export class UnsubscribeLinks {
  constructor(
    @inject(SERVICES.Config) private readonly config: AppConfig,
    @inject(LinkSigner) private readonly signer: LinkSigner,
  ) {}

  async link(organizationId: number, messageId: number, subscriberId: number): Promise<string> {
    const token = await this.signer.sign(PURPOSE, [organizationId, messageId, subscriberId]);
    return `${this.config.publicUrl}${UNSUBSCRIBE_PATH}?token=${token}`;
  }

  /** The ids a link carries, or null when this install did not sign it. */
  async read(token: string): Promise<{ organizationId: number; messageId: number; subscriberId: number } | null> {
    const ids = await this.signer.verify(PURPOSE, token);
    if (!ids || ids.length !== 3) return null;
    return { organizationId: ids[0], messageId: ids[1], subscriberId: ids[2] };
  }
}
