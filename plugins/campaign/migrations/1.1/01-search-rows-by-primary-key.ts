import type { Knex } from 'knex';

/**
 * The tables an import writes lose their foreign keys: search rows (subscriber_tokens,
 * subscriber_meta) and memberships to subscribers, subscribers to organizations; the search rows
 * also lose their index on subscriber_id. A subscriber's search rows are derived from its own row,
 * so they are found again by primary key. Measured on MariaDB: the checks and the extra index cost
 * about 40% of an import's time; every concurrent import share-locks the one organization row once
 * per subscriber. Deleting a subscriber deletes its rows itself (see docs/decisions.md).
 */
const SEARCH_TABLES = [
  { table: 'subscriber_tokens', index: 'subscriber_tokens_subscriber_idx' },
  { table: 'subscriber_meta', index: 'subscriber_meta_subscriber_idx' },
];

export async function up(knex: Knex): Promise<void> {
  for (const { table, index } of SEARCH_TABLES) {
    await knex.schema.alterTable(table, (t) => t.dropForeign(['subscriber_id']));
    await knex.schema.alterTable(table, (t) => t.dropIndex(['subscriber_id'], index));
  }
  await knex.schema.alterTable('list_subscribers', (t) => t.dropForeign(['subscriber_id']));
  await knex.schema.alterTable('subscribers', (t) => t.dropForeign(['organization_id']));
}

export async function down(knex: Knex): Promise<void> {
  await knex('subscribers').whereNotIn('organization_id', knex('organizations').select('id')).delete();
  await knex.schema.alterTable('subscribers', (t) =>
    t.foreign('organization_id').references('id').inTable('organizations').onDelete('CASCADE'),
  );
  // Rows of subscribers deleted under 1.1 would fail the restored foreign keys.
  for (const table of ['subscriber_tokens', 'subscriber_meta', 'list_subscribers']) {
    await knex(table).whereNotIn('subscriber_id', knex('subscribers').select('id')).delete();
  }
  for (const { table, index } of SEARCH_TABLES) {
    await knex.schema.alterTable(table, (t) => t.index(['subscriber_id'], index));
    await knex.schema.alterTable(table, (t) =>
      t.foreign('subscriber_id').references('id').inTable('subscribers').onDelete('CASCADE'),
    );
  }
  await knex.schema.alterTable('list_subscribers', (t) =>
    t.foreign('subscriber_id').references('id').inTable('subscribers').onDelete('CASCADE'),
  );
}
