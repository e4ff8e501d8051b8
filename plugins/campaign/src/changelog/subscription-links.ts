import type { Knex } from 'knex';
import { AppError } from '@switchboard/core';
import type { LinkSigner } from '../shared/link-signer';

/** The subscription a signed link of a changelog mail names (unsubscribe, confirm); a link not valid is a 404. */
export async function subscriptionOfLink(
  knex: Knex,
  signer: LinkSigner,
  purpose: string,
  token: string,
  columns: string[],
): Promise<Record<string, unknown>> {
  const invalid = () => new AppError('RESOURCE_NOT_FOUND', 'This link is not valid');
  const ids = await signer.verify(purpose, token);
  if (!ids || ids.length !== 1) throw invalid();
  const row = await knex('changelog_subscriptions')
    .where({ id: ids[0] })
    .first(['id', 'email', ...columns]);
  if (!row) throw invalid();
  return row;
}
