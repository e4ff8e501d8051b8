import type { Knex } from 'knex';
import { alterTableOnce, createTableOnce, withoutSqliteForeignKeys } from '@switchboard/core';

/**
 * Every open and click counts (issue 24, campaign spec §6: each `opened` adds 1 to count_read): the mails
 * opened and clicked at least once move to their own counters (`unique_opened`, `unique_clicked`, what the
 * rates are of), and every open and click our tracking sees is recorded with its mail (`tracked_events`;
 * a provider's are its recorded events) so a rebuild counts them. An older version counted a mail's first
 * open and click only: its counters become those unique figures, and the first-open and first-click marks
 * of mails no provider reported an open or click of become the first tracked records (what else would a
 * mark be). Down drops both, and count_read and count_clicked go back to what 1.11 counted in them, the
 * unique figures: 1.11 reads its rates from them, and an upgrade again copies them into the unique columns
 * (keeping every open there made a round trip show each open as a mail opened; session 31). The totals of
 * every open and click are lost with the rollback.
 */
export async function up(knex: Knex): Promise<void> {
  await addEngagementSchema(knex);
  await knex('messages').update({ unique_opened: knex.ref('count_read'), unique_clicked: knex.ref('count_clicked') });
  // Outside a transaction (config): a run again after a failed one starts the records over.
  await knex('tracked_events').delete();
  for (const [type, mark] of [
    ['opened', 'opened_at'],
    ['clicked', 'clicked_at'],
  ])
    await knex.raw(
      'INSERT INTO tracked_events (send_id, subscriber_id, event_type, occurred_at) ' +
        'SELECT r.send_id, r.subscriber_id, ?, r.?? FROM send_recipients r JOIN message_sends s ON s.id = r.send_id ' +
        'WHERE r.?? IS NOT NULL AND NOT EXISTS (SELECT 1 FROM inbound_events e WHERE e.message_id = s.message_id ' +
        "AND e.event_type IN ('opened', 'clicked') AND e.subscriber_id = r.subscriber_id) " +
        'ORDER BY r.send_id, r.subscriber_id',
      [type, mark, mark],
    );
}

/** Not in one transaction: dropping a column of `messages` copies it in SQLite (withoutSqliteForeignKeys). */
export const config = { transaction: false };

export async function down(knex: Knex): Promise<void> {
  if (await knex.schema.hasColumn('messages', 'unique_opened'))
    await knex('messages').update({ count_read: knex.ref('unique_opened'), count_clicked: knex.ref('unique_clicked') });
  await knex.schema.dropTableIfExists('tracked_events');
  await withoutSqliteForeignKeys(knex, async () => {
    for (const column of ['unique_opened', 'unique_clicked'])
      if (await knex.schema.hasColumn('messages', column))
        await alterTableOnce(knex, 'messages', (t) => t.dropColumn(column));
  });
}

/** The columns and table alone (upgrade tests give them to a schema of an older version, which today's code writes). */
export async function addEngagementSchema(knex: Knex): Promise<void> {
  for (const column of ['unique_opened', 'unique_clicked'])
    if (!(await knex.schema.hasColumn('messages', column)))
      await alterTableOnce(knex, 'messages', (t) => t.integer(column).unsigned().notNullable().defaultTo(0));
  // An upgrade test's schema from before 1.6 has no sends to record engagements of.
  if (!(await knex.schema.hasTable('message_sends'))) return;
  await createTableOnce(knex, 'tracked_events', (t) => {
    t.bigIncrements('id');
    t.integer('send_id').unsigned().notNullable().references('id').inTable('message_sends').onDelete('CASCADE');
    t.integer('subscriber_id').unsigned().notNullable();
    t.string('event_type', 8).notNullable();
    t.datetime('occurred_at', { precision: 3 }).notNullable();
    t.index(['send_id', 'id'], 'tracked_events_send_idx');
  });
}
