import { inject, injectable } from 'tsyringe';
import { AppConfig, SERVICES } from '@switchboard/core';
import { LinkSigner } from '../shared/link-signer';
import { UNSUBSCRIBE_PATH } from '../shared/paths';

const PURPOSE = 'unsubscribe';
/** A test mail's link (POST /messages/{id}/test): signed for the organization and message alone. */
const TEST_PURPOSE = 'unsubscribe-test';

/** The subscriber id a test mail's link reads as: nobody. */
export const TEST_RECIPIENT = 0;

/** The one-click unsubscribe link of a mail: signed for one organization, message and subscriber. */
@injectable()
export class UnsubscribeLinks {
  constructor(
    @inject(SERVICES.Config) private readonly config: AppConfig,
    @inject(LinkSigner) private readonly signer: LinkSigner,
  ) {}

  async link(organizationId: number, messageId: number, subscriberId: number): Promise<string> {
    const token =
      subscriberId === TEST_RECIPIENT
        ? await this.signer.sign(TEST_PURPOSE, [organizationId, messageId])
        : await this.signer.sign(PURPOSE, [organizationId, messageId, subscriberId]);
    return `${this.config.publicUrl}${UNSUBSCRIBE_PATH}?token=${token}`;
  }

  /** The ids a link carries, or null when this install did not sign it. */
  async read(token: string): Promise<{ organizationId: number; messageId: number; subscriberId: number } | null> {
    const ids = await this.signer.verify(PURPOSE, token);
    if (ids?.length === 3) return { organizationId: ids[0], messageId: ids[1], subscriberId: ids[2] };
    const test = await this.signer.verify(TEST_PURPOSE, token);
    return test?.length === 2 ? { organizationId: test[0], messageId: test[1], subscriberId: TEST_RECIPIENT } : null;
  }
}
