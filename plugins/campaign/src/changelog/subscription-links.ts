import type { Knex } from 'knex';
import { AppError } from '@switchboard/core';
import type { LinkSigner } from '../shared/link-signer';
import { addressOf, type ChangelogAddress } from './addresses';

/**
 * The subscription a signed link of a changelog mail names (unsubscribe, confirm), with its address, whose
 * consent the link reads or changes; a link not valid is a 404.
 */
export async function subscriptionOfLink(
  knex: Knex,
  signer: LinkSigner,
  purpose: string,
  token: string,
): Promise<{ email: string; address: ChangelogAddress }> {
  const invalid = () => new AppError('RESOURCE_NOT_FOUND', 'This link is not valid');
  const ids = await signer.verify(purpose, token);
  if (!ids || ids.length !== 1) throw invalid();
  const row = await knex('changelog_subscriptions')
    .where({ id: ids[0] })
    .first('id', 'organization_id', 'email', 'address_id');
  if (!row) throw invalid();
  return { email: String(row.email), address: await addressOf(knex, row) };
}
