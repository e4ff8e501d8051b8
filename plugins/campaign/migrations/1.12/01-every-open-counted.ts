import type { Knex } from 'knex';
import { withoutSqliteForeignKeys } from '@switchboard/core';

/**
 * Every open and click counts (issue 24, campaign spec §6: each `opened` adds 1 to count_read): the mails
 * opened and clicked at least once move to their own counters (`unique_opened`, `unique_clicked`, what the
 * rates are of), and every counted open and click is recorded with its mail (`mail_engagements`) so a
 * rebuild counts them. An older version counted a mail's first open and click only: its counters are
 * those unique figures, and its first-open and first-click marks become the first engagement records.
 * Down drops both (count_read and count_clicked keep what they counted).
 */
export async function up(knex: Knex): Promise<void> {
  await addEngagementSchema(knex);
  await knex('messages').update({ unique_opened: knex.ref('count_read'), unique_clicked: knex.ref('count_clicked') });
  // Outside a transaction (config): a run again after a failed one starts the records over.
  await knex('mail_engagements').delete();
  for (const [type, mark] of [
    ['opened', 'opened_at'],
    ['clicked', 'clicked_at'],
  ])
    await knex.raw(
      'INSERT INTO mail_engagements (send_id, subscriber_id, event_type, occurred_at) ' +
        'SELECT send_id, subscriber_id, ?, ?? FROM send_recipients WHERE ?? IS NOT NULL ORDER BY send_id, subscriber_id',
      [type, mark, mark],
    );
}

/** Not in one transaction: dropping a column of `messages` copies it in SQLite (withoutSqliteForeignKeys). */
export const config = { transaction: false };

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('mail_engagements');
  await withoutSqliteForeignKeys(knex, async () => {
    for (const column of ['unique_opened', 'unique_clicked'])
      if (await knex.schema.hasColumn('messages', column))
        await knex.schema.alterTable('messages', (t) => t.dropColumn(column));
  });
}

/** The columns and table alone (upgrade tests give them to a schema of an older version, which today's code writes). */
export async function addEngagementSchema(knex: Knex): Promise<void> {
  for (const column of ['unique_opened', 'unique_clicked'])
    if (!(await knex.schema.hasColumn('messages', column)))
      await knex.schema.alterTable('messages', (t) => t.integer(column).unsigned().notNullable().defaultTo(0));
  // An upgrade test's schema from before 1.6 has no sends to record engagements of.
  if ((await knex.schema.hasTable('mail_engagements')) || !(await knex.schema.hasTable('message_sends'))) return;
  await knex.schema.createTable('mail_engagements', (t) => {
    t.bigIncrements('id');
    t.integer('send_id').unsigned().notNullable().references('id').inTable('message_sends').onDelete('CASCADE');
    t.integer('subscriber_id').unsigned().notNullable();
    t.string('event_type', 8).notNullable();
    t.datetime('occurred_at', { precision: 3 }).notNullable();
    t.index(['send_id', 'id'], 'mail_engagements_send_idx');
  });
}
