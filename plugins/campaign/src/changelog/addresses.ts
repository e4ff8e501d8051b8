import type { Knex } from 'knex';
import { insertedId, isUniqueViolation, toInt } from '@switchboard/core';
import { addressHashOf } from './address-hash';

/** The consent of one address in an organization: every subscription of that address follows it. */
export interface ChangelogAddress {
  id: number;
  confirmed_at: unknown;
  unsubscribed_at: unknown;
  asked_at: unknown;
  ask_subscription_id: unknown;
  ask_due_at: unknown;
}

/** Confirmed, and not unsubscribed since. */
export const isConfirmed = (address: ChangelogAddress): boolean =>
  address.confirmed_at !== null && address.unsubscribed_at === null;

/**
 * The address of a subscription, given to it where it has none yet (a subscription just made, or one
 * written by an older version during an upgrade: a new address takes that subscription's own answers, as
 * the upgrade gives them).
 */
export async function addressOf(
  knex: Knex,
  subscription: { id: unknown; organization_id: unknown; email: unknown; address_id: unknown },
): Promise<ChangelogAddress> {
  const id =
    subscription.address_id === null
      ? await giveAddress(knex, toInt(subscription.id), toInt(subscription.organization_id), String(subscription.email))
      : toInt(subscription.address_id);
  const row = await knex('changelog_addresses')
    .where({ id })
    .first('id', 'confirmed_at', 'unsubscribed_at', 'asked_at', 'ask_subscription_id', 'ask_due_at');
  return { ...row, id: toInt(row.id) };
}

async function giveAddress(knex: Knex, subscriptionId: number, organizationId: number, email: string) {
  const key = { organization_id: organizationId, address_hash: addressHashOf(email) };
  let id: number;
  try {
    const own = await knex('changelog_subscriptions')
      .where({ id: subscriptionId })
      .first('confirmed_at', 'unsubscribed_at', 'asked_at');
    id = insertedId(await knex('changelog_addresses').insert({ ...key, ...own }));
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    id = toInt((await knex('changelog_addresses').where(key).first('id')).id);
  }
  await knex('changelog_subscriptions')
    .where({ id: subscriptionId })
    .whereNull('address_id')
    .update({ address_id: id });
  return id;
}
