import type { Knex } from 'knex';
import { alterTableOnce, createTableOnce, withoutSqliteForeignKeys } from '@switchboard/core';

/**
 * Changelog notices (docs/decisions.md, Changelog): the entries the host published, and one notice per
 * entry, subscription and channel (e-mail, webhook), written before anything is sent, so a notice goes out
 * once and a lost queue loses none. A subscription can be unsubscribed through its mails' link.
 */
export async function up(knex: Knex): Promise<void> {
  await addUnsubscribedAt(knex);
  await createTableOnce(knex, 'changelog_entries', (t) => {
    t.increments('id').primary();
    t.string('entry_key', 191).notNullable().unique('changelog_entries_key_unique');
    t.string('title', 255).notNullable();
    t.text('body').notNullable();
    t.datetime('published_at', { precision: 3 }).notNullable();
  });
  await createTableOnce(knex, 'changelog_notices', (t) => {
    t.increments('id').primary();
    t.integer('entry_id').unsigned().notNullable().references('id').inTable('changelog_entries').onDelete('CASCADE');
    t.integer('subscription_id')
      .unsigned()
      .notNullable()
      .references('id')
      .inTable('changelog_subscriptions')
      .onDelete('CASCADE');
    // email | webhook
    t.string('channel', 8).notNullable();
    // pending | sent | failed
    t.string('state', 8).notNullable();
    t.integer('attempts').unsigned().notNullable().defaultTo(0);
    t.datetime('next_attempt_at', { precision: 3 }).notNullable();
    t.string('last_error', 255).nullable();
    t.datetime('sent_at', { precision: 3 }).nullable();
    t.unique(['entry_id', 'subscription_id', 'channel'], { indexName: 'changelog_notices_once' });
    t.index(['state', 'next_attempt_at'], 'changelog_notices_due_idx');
  });
}

/** The column, where missing (an upgrade test's older schema gets it before today's code runs). */
export async function addUnsubscribedAt(knex: Knex): Promise<void> {
  if (!(await knex.schema.hasColumn('changelog_subscriptions', 'unsubscribed_at')))
    await alterTableOnce(knex, 'changelog_subscriptions', (t) => {
      t.datetime('unsubscribed_at', { precision: 3 }).nullable();
    });
}

/**
 * Not in one transaction: SQLite drops a column by copying its table, and dropping the old table would
 * cascade unless foreign keys are off, which SQLite ignores inside a transaction.
 */
export const config = { transaction: false };

export async function down(knex: Knex): Promise<void> {
  await withoutSqliteForeignKeys(knex, async () => {
    await knex.schema.dropTableIfExists('changelog_notices');
    await knex.schema.dropTableIfExists('changelog_entries');
    if (await knex.schema.hasColumn('changelog_subscriptions', 'unsubscribed_at')) {
      // Who left goes with the column: kept, they would be subscribed again by an upgrade (session 31).
      await knex('changelog_subscriptions').whereNotNull('unsubscribed_at').delete();
      await alterTableOnce(knex, 'changelog_subscriptions', (t) => t.dropColumn('unsubscribed_at'));
    }
  });
}
