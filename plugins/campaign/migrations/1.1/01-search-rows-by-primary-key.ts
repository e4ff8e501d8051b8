import type { Knex } from 'knex';
import { alterTableOnce } from '@switchboard/core';

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

/**
 * Each change is made only if it is still to make (core alterTableOnce): on MySQL every ALTER commits on its
 * own, so a run killed after the first ones must be able to run again (an outside review's killed `migrate`
 * could not: "Can't DROP FOREIGN KEY"). SQLite runs the whole migration in one transaction.
 */
export async function up(knex: Knex): Promise<void> {
  for (const { table, index } of SEARCH_TABLES) {
    await alterTableOnce(knex, table, (t) => t.dropForeign(['subscriber_id']));
    await alterTableOnce(knex, table, (t) => t.dropIndex(['subscriber_id'], index));
  }
  await alterTableOnce(knex, 'list_subscribers', (t) => t.dropForeign(['subscriber_id']));
  await alterTableOnce(knex, 'subscribers', (t) => t.dropForeign(['organization_id']));
}

export async function down(knex: Knex): Promise<void> {
  await knex('subscribers').whereNotIn('organization_id', knex('organizations').select('id')).delete();
  await alterTableOnce(knex, 'subscribers', (t) =>
    t.foreign('organization_id').references('id').inTable('organizations').onDelete('CASCADE'),
  );
  // Rows of subscribers deleted under 1.1 would fail the restored foreign keys.
  for (const table of ['subscriber_tokens', 'subscriber_meta', 'list_subscribers']) {
    await knex(table).whereNotIn('subscriber_id', knex('subscribers').select('id')).delete();
  }
  for (const { table, index } of SEARCH_TABLES) {
    await alterTableOnce(knex, table, (t) => t.index(['subscriber_id'], index));
    await alterTableOnce(knex, table, (t) =>
      t.foreign('subscriber_id').references('id').inTable('subscribers').onDelete('CASCADE'),
    );
  }
  await alterTableOnce(knex, 'list_subscribers', (t) =>
    t.foreign('subscriber_id').references('id').inTable('subscribers').onDelete('CASCADE'),
  );
}
