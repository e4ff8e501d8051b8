import type { Knex } from 'knex';
import { alterTableOnce, dropColumnsOnce } from '@switchboard/core';

/**
 * When a changelog subscription's address was last asked to confirm (issue 24): subscribing again asks at
 * most once a day, and once after each unsubscribe, so an organization cannot mail a stranger again and again.
 */
export async function up(knex: Knex): Promise<void> {
  await addAskedAt(knex);
}

export async function down(knex: Knex): Promise<void> {
  // In place on SQLite: a copy of the table in this transaction would delete every notice (their foreign key).
  await dropColumnsOnce(knex, 'changelog_subscriptions', ['asked_at']);
}

/** The column alone (upgrade tests give it to a schema of an older version, which today's code writes). */
export async function addAskedAt(knex: Knex): Promise<void> {
  if (!(await knex.schema.hasColumn('changelog_subscriptions', 'asked_at')))
    await alterTableOnce(knex, 'changelog_subscriptions', (t) => t.datetime('asked_at', { precision: 3 }).nullable());
}
