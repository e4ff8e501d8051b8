import type { Knex } from 'knex';
import { dialectOfKnex } from '@switchboard/core';

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
 * Each change is made only if it is still to make: on MySQL every ALTER commits on its own, so a run killed
 * after the first ones must be able to run again (an outside review's killed `migrate` could not: "Can't
 * DROP FOREIGN KEY"). SQLite runs the whole migration in one transaction, so it always starts from 1.0.
 */
export async function up(knex: Knex): Promise<void> {
  for (const { table, index } of SEARCH_TABLES) {
    if (await hasForeignKey(knex, table, 'subscriber_id'))
      await knex.schema.alterTable(table, (t) => t.dropForeign(['subscriber_id']));
    if (await hasIndex(knex, table, index))
      await knex.schema.alterTable(table, (t) => t.dropIndex(['subscriber_id'], index));
  }
  if (await hasForeignKey(knex, 'list_subscribers', 'subscriber_id'))
    await knex.schema.alterTable('list_subscribers', (t) => t.dropForeign(['subscriber_id']));
  if (await hasForeignKey(knex, 'subscribers', 'organization_id'))
    await knex.schema.alterTable('subscribers', (t) => t.dropForeign(['organization_id']));
}

const isMysql = (knex: Knex) => dialectOfKnex(knex) === 'mysql';

/** Whether `table` has a foreign key on `column` (on SQLite, always: see up). */
async function hasForeignKey(knex: Knex, table: string, column: string): Promise<boolean> {
  if (!isMysql(knex)) return true;
  const rows = await knex('information_schema.key_column_usage')
    .whereRaw('table_schema = database()')
    .andWhere({ table_name: table, column_name: column })
    .whereNotNull('referenced_table_name')
    .select('constraint_name');
  return rows.length > 0;
}

async function hasIndex(knex: Knex, table: string, index: string): Promise<boolean> {
  if (!isMysql(knex)) return true;
  const rows = await knex('information_schema.statistics')
    .whereRaw('table_schema = database()')
    .andWhere({ table_name: table, index_name: index })
    .select('index_name');
  return rows.length > 0;
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
