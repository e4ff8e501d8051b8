import type { Knex } from 'knex';
import { alterTableOnce, createTableOnce, withoutSqliteForeignKeys } from '@switchboard/core';

/**
 * Analytics (docs/decisions.md, Analytics): an organization's daily figures, added to in the transaction
 * of each change they count, and the UTC day of each subscriber's latest engagement, whose day counts
 * tell how many subscribers were active within a window. Existing data is counted in by
 * `campaign:analytics:rebuild` (docs/operations.md, upgrading to 1.10).
 */
export async function up(knex: Knex): Promise<void> {
  await createAnalyticsSchema(knex);
}

/** The table and column, where missing (an upgrade test's older schema gets them before today's code runs). */
export async function createAnalyticsSchema(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'analytics_daily', (t) => {
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    // YYYY-MM-DD, a UTC day: the same text on every database.
    t.string('day', 10).notNullable();
    t.string('metric', 32).notNullable();
    // Day counts of some metrics go below zero (a subscriber's last engagement moving to a later day).
    t.bigInteger('value').notNullable();
    t.primary(['organization_id', 'metric', 'day']);
  });
  if (!(await knex.schema.hasColumn('subscribers', 'last_engaged_day')))
    await alterTableOnce(knex, 'subscribers', (t) => {
      t.string('last_engaged_day', 10).nullable();
    });
}

/**
 * Not in one transaction: SQLite drops a column by copying its table, and dropping the old `subscribers`
 * would cascade to every membership unless foreign keys are off, which SQLite ignores inside a transaction.
 */
export const config = { transaction: false };

export async function down(knex: Knex): Promise<void> {
  await withoutSqliteForeignKeys(knex, async () => {
    if (await knex.schema.hasColumn('subscribers', 'last_engaged_day'))
      await alterTableOnce(knex, 'subscribers', (t) => t.dropColumn('last_engaged_day'));
    await knex.schema.dropTableIfExists('analytics_daily');
  });
}
