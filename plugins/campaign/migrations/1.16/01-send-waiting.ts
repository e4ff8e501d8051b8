import type { Knex } from 'knex';
import { alterTableOnce, dropColumnsOnce } from '@switchboard/core';

/**
 * Why an active send is not moving (docs/decisions.md, Sending, "Outcomes"): while its mail cannot be
 * handed over (the relay out of reach, the outbox's disk full), since when and the last error; cleared once
 * mail passes again. Sends of an older version start with neither.
 */
export async function up(knex: Knex): Promise<void> {
  await addSendWaiting(knex);
}

export async function down(knex: Knex): Promise<void> {
  // In place on SQLite (no index names them): a copy of `message_sends` would need foreign keys off.
  await dropColumnsOnce(knex, 'message_sends', ['waiting_since', 'waiting_reason']);
}

/** The columns alone (upgrade tests give them to a schema of an older version, which today's code writes). */
export async function addSendWaiting(knex: Knex): Promise<void> {
  // An upgrade test's schema from before 1.6 has no sends.
  if (!(await knex.schema.hasTable('message_sends'))) return;
  await alterTableOnce(knex, 'message_sends', (t) => {
    t.datetime('waiting_since', { precision: 3 }).nullable();
    t.string('waiting_reason', 255).nullable();
  });
}
