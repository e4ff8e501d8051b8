import type { Knex } from 'knex';
import {
  alterTableOnce,
  createTableOnce,
  dropColumnsOnce,
  hasIndex,
  insertedId,
  toDate,
  toInt,
} from '@switchboard/core';
import { addressHashOf } from '../../src/changelog/address-hash';

const STATE = ['confirmed_at', 'unsubscribed_at', 'asked_at'] as const;

/**
 * Changelog e-mail consent moves from each subscription to its address in the organization
 * (docs/decisions.md, Changelog notices): one address asked once a day whatever its webhook urls, its
 * confirmation and its unsubscribe covering all its subscriptions. An address is its e-mail lower-cased and
 * compared as a SHA-256 (byte for byte, whatever the column's collation: MariaDB's would take an accented
 * look-alike for the address). Mails pending for an address through several subscriptions become one. The
 * confirmation mail asked is recorded until written, so a lost job is queued
 * again (as 1.14 does for subscribers). The upgrade gives each address the latest of its subscriptions' answers.
 * No foreign key from subscriptions: SQLite would copy the table to add one, deleting every notice.
 */
export async function up(knex: Knex): Promise<void> {
  await createChangelogAddresses(knex);
  await addAddressId(knex);
  // Looks before it acts: a run stopped half way (a killed process) runs again. An organization at a time,
  // its subscriptions read once (changelog subscriptions are few).
  for (;;) {
    const waiting = await knex('changelog_subscriptions').whereNull('address_id').first('organization_id');
    if (!waiting) break;
    const organizationId = toInt(waiting.organization_id);
    const byAddress = new Map<string, Array<Record<string, unknown>>>();
    const rows: Array<Record<string, unknown>> = await knex('changelog_subscriptions')
      .where({ organization_id: organizationId })
      .select('id', 'email', 'address_id', ...STATE);
    for (const row of rows) {
      const hash = addressHashOf(String(row.email));
      byAddress.set(hash, [...(byAddress.get(hash) ?? []), row]);
    }
    for (const [hash, subscriptions] of byAddress)
      if (subscriptions.some((s) => s.address_id === null))
        await giveAddress(knex, organizationId, hash, subscriptions);
  }
  await dropRepeatedMails(knex);
}

/**
 * The mails still pending were made one per subscription: an address mailed an entry (or with one pending
 * already) drops the others, as 1.18 makes one an address (found on the pending entries alone).
 */
async function dropRepeatedMails(knex: Knex): Promise<void> {
  const entries = await knex('changelog_notices')
    .where({ channel: 'email', state: 'pending' })
    .distinct('entry_id')
    .pluck('entry_id');
  for (const entryId of entries) {
    const mails: Array<Record<string, unknown>> = await knex('changelog_notices as n')
      .join('changelog_subscriptions as s', 's.id', 'n.subscription_id')
      .where({ 'n.entry_id': entryId, 'n.channel': 'email' })
      .whereIn('n.state', ['pending', 'sent'])
      .orderBy('n.id')
      .select('n.id', 'n.state', 's.address_id');
    const kept = new Map<number, { id: number; state: string }>();
    const dropped: number[] = [];
    for (const mail of mails) {
      const address = toInt(mail.address_id);
      const first = kept.get(address);
      if (!first) kept.set(address, { id: toInt(mail.id), state: String(mail.state) });
      else if (mail.state === 'pending') dropped.push(toInt(mail.id));
      else if (first.state === 'pending') {
        // A sent one after a pending one: the pending one goes.
        dropped.push(first.id);
        kept.set(address, { id: toInt(mail.id), state: 'sent' });
      }
    }
    for (let i = 0; i < dropped.length; i += 500)
      await knex('changelog_notices')
        .whereIn('id', dropped.slice(i, i + 500))
        .where({ state: 'pending' })
        .update({ state: 'dropped' });
  }
}

/** The address of subscriptions whose e-mails lower-case alike, with the latest of their answers. */
async function giveAddress(
  knex: Knex,
  organizationId: number,
  hash: string,
  subscriptions: Array<Record<string, unknown>>,
): Promise<void> {
  const latest = (column: (typeof STATE)[number]) =>
    subscriptions.reduce<Date | null>((at, s) => {
      const d = toDate(s[column]);
      return d && (!at || d > at) ? d : at;
    }, null);
  const confirmed = latest('confirmed_at');
  const unsubscribed = latest('unsubscribed_at');
  const existing = await knex('changelog_addresses')
    .where({ organization_id: organizationId, address_hash: hash })
    .first('id');
  const id = existing
    ? toInt(existing.id)
    : insertedId(
        await knex('changelog_addresses').insert({
          organization_id: organizationId,
          address_hash: hash,
          confirmed_at: confirmed,
          // An unsubscribe since the latest confirmation stands (it stopped one subscription of the address;
          // 1.11 counted the subscriptions before it confirmed when made, an unsubscribe's moment too).
          unsubscribed_at: unsubscribed && (!confirmed || unsubscribed >= confirmed) ? unsubscribed : null,
          asked_at: latest('asked_at'),
        }),
      );
  await knex('changelog_subscriptions')
    .whereIn(
      'id',
      subscriptions.map((s) => toInt(s.id)),
    )
    .update({ address_id: id });
}

/** Not in one transaction: SQLite drops a column in place, and each step looks before it acts. */
export const config = { transaction: false };

/** 1.17 reads each subscription's own answers: each gets its address's. */
export async function down(knex: Knex): Promise<void> {
  // Looks before it acts, as up: a rollback stopped after the column went runs again.
  if (
    (await knex.schema.hasTable('changelog_addresses')) &&
    (await knex.schema.hasColumn('changelog_subscriptions', 'address_id'))
  ) {
    const addresses: Array<Record<string, unknown>> = await knex('changelog_addresses').select('id', ...STATE);
    for (const a of addresses)
      await knex('changelog_subscriptions')
        .where({ address_id: toInt(a.id) })
        .update(Object.fromEntries(STATE.map((c) => [c, a[c] ?? null])));
  }
  if (await hasIndex(knex, 'changelog_subscriptions', 'changelog_subscriptions_address_idx'))
    await alterTableOnce(knex, 'changelog_subscriptions', (t) =>
      t.dropIndex(['address_id'], 'changelog_subscriptions_address_idx'),
    );
  await dropColumnsOnce(knex, 'changelog_subscriptions', ['address_id']);
  await knex.schema.dropTableIfExists('changelog_addresses');
}

/** The table alone (upgrade tests give it to a schema of an older version, which today's code writes). */
export async function createChangelogAddresses(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'changelog_addresses', (t) => {
    t.increments('id').primary();
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    // SHA-256 (hex) of the e-mail lower-cased.
    t.string('address_hash', 64).notNullable();
    t.datetime('confirmed_at', { precision: 3 }).nullable();
    t.datetime('unsubscribed_at', { precision: 3 }).nullable();
    t.datetime('asked_at', { precision: 3 }).nullable();
    // The confirmation mail asked last, until it is written: the sweep queues it again should its job be lost.
    t.integer('ask_subscription_id').unsigned().nullable();
    t.datetime('ask_due_at', { precision: 3 }).nullable().index('changelog_addresses_ask_due_idx');
    t.unique(['organization_id', 'address_hash'], { indexName: 'changelog_addresses_unique' });
  });
}

/** The column alone (as createChangelogAddresses). */
export async function addAddressId(knex: Knex): Promise<void> {
  await alterTableOnce(knex, 'changelog_subscriptions', (t) => {
    t.integer('address_id').unsigned().nullable();
    t.index(['address_id'], 'changelog_subscriptions_address_idx');
  });
}
