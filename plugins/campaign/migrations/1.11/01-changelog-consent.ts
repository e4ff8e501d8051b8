import type { Knex } from 'knex';
import { alterTableOnce, dropColumnsOnce } from '@switchboard/core';

/**
 * Changelog subscriptions by e-mail are confirmed by their address first (issue 24): `confirmed_at`. The
 * subscriptions of an older version were taken without it and keep getting their notices: they count as
 * confirmed when they were made. Down drops the column and the subscriptions still waiting for their
 * address: 1.10 mails every subscription it holds, and up again would count them confirmed (session 31: a
 * round trip mailed people who never confirmed). They can subscribe again.
 */
export async function up(knex: Knex): Promise<void> {
  await addConfirmedAt(knex);
  await knex('changelog_subscriptions')
    .whereNull('confirmed_at')
    .update({ confirmed_at: knex.ref('created_at') });
}

export async function down(knex: Knex): Promise<void> {
  if (!(await knex.schema.hasColumn('changelog_subscriptions', 'confirmed_at'))) return;
  await knex('changelog_subscriptions').whereNull('confirmed_at').delete();
  // In place on SQLite: a copy of the table in this transaction would delete every notice (their foreign key).
  await dropColumnsOnce(knex, 'changelog_subscriptions', ['confirmed_at']);
}

/** The column alone (upgrade tests give it to a schema of an older version, which today's code writes). */
export async function addConfirmedAt(knex: Knex): Promise<void> {
  if (!(await knex.schema.hasColumn('changelog_subscriptions', 'confirmed_at')))
    await alterTableOnce(knex, 'changelog_subscriptions', (t) =>
      t.datetime('confirmed_at', { precision: 3 }).nullable(),
    );
}
