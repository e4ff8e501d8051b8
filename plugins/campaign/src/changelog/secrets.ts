import { inject, injectable } from 'tsyringe';
import { LinkSigner } from '../shared/link-signer';
import { whsecOf } from '../shared/standard-webhooks';

/**
 * Each changelog subscription's webhook signing secret, derived from the install's secret and the
 * subscription's id: stored nowhere, the same on every subscribe answer, so a subscription made before
 * notices existed gets its secret by subscribing again.
 */
@injectable()
export class ChangelogSecrets {
  constructor(@inject(LinkSigner) private readonly signer: LinkSigner) {}

  async keyOf(subscriptionId: number): Promise<Buffer> {
    return this.signer.derivedKey('changelog-webhook', [subscriptionId]);
  }

  async secretOf(subscriptionId: number): Promise<string> {
    return whsecOf(await this.keyOf(subscriptionId));
  }
}
