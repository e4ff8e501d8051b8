import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

/**
 * An organization's defaults for new messages: whether they track opens and clicks unless they say
 * otherwise. No row means both off.
 */
export async function up(knex: Knex): Promise<void> {
  // MySQL does not roll DDL back: a run that stopped halfway left a table to make again.
  await knex.schema.dropTableIfExists('message_defaults');
  await createTableOnce(knex, 'message_defaults', (t) => {
    t.integer('organization_id').unsigned().primary().references('id').inTable('organizations').onDelete('CASCADE');
    t.boolean('track_opens').notNullable().defaultTo(false);
    t.boolean('track_clicks').notNullable().defaultTo(false);
    t.datetime('updated_at', { precision: 3 }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('message_defaults');
}
