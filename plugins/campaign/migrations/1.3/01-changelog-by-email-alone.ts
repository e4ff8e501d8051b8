import type { Knex } from 'knex';
import { alterTableOnce } from '@switchboard/core';

/**
 * A changelog subscription may name no webhook url: `webhook_url` becomes nullable. Such a row keeps
 * '' as its `webhook_url_hash`, so the unique key (organization, email, url hash) still holds one
 * subscription per email without a url.
 */
export async function up(knex: Knex): Promise<void> {
  await alterTableOnce(knex, 'changelog_subscriptions', (t) => t.string('webhook_url', 512).nullable().alter());
  // Rows a rollback gave an empty url (see down) are subscriptions by email alone again.
  await knex('changelog_subscriptions').where({ webhook_url: '' }).update({ webhook_url: null });
}

/** Earlier versions require a url: a subscription by email alone keeps its row, with an empty url. */
export async function down(knex: Knex): Promise<void> {
  await knex('changelog_subscriptions').whereNull('webhook_url').update({ webhook_url: '' });
  await alterTableOnce(knex, 'changelog_subscriptions', (t) => t.string('webhook_url', 512).notNullable().alter());
}
