import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

/**
 * The double opt-in mails still to send, written in the transaction that makes the unconfirmed subscriber
 * (issue 26): the queued job can be lost (the process stopped before it queued it, Redis restarted empty,
 * the embedded queue lives in memory), the row cannot, and a sweep queues the job again from it. An
 * older version's unconfirmed subscribers have no row: their mails were sent or lost before the upgrade,
 * and mailing them again days later would surprise them.
 */
export async function up(knex: Knex): Promise<void> {
  await createConfirmationMailsDue(knex);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('confirmation_mails_due');
}

/** The table alone (upgrade tests give it to a schema of an older version, which today's code writes). */
export async function createConfirmationMailsDue(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'confirmation_mails_due', (t) => {
    t.integer('subscriber_id').unsigned().primary().references('id').inTable('subscribers').onDelete('CASCADE');
    t.integer('organization_id').unsigned().notNullable();
    // When the sweep may queue it (again): a while after it was queued, so a job still waiting is left alone.
    t.datetime('due_at', { precision: 3 }).notNullable().index();
    t.datetime('created_at', { precision: 3 }).notNullable();
  });
}
