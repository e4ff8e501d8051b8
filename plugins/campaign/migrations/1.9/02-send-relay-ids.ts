import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

/**
 * The id a relay gave each mail it accepted (the "queued as" of its SMTP answer): provider events that
 * carry only the provider's message id find their mail through it. Our own Message-ID needs no row: it
 * names its send, subscriber and message (sending/send-worker.ts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('send_relay_ids');
  await createTableOnce(knex, 'send_relay_ids', (t) => {
    t.integer('organization_id').unsigned().notNullable();
    t.string('relay_id', 191).notNullable();
    t.integer('send_id').unsigned().notNullable().references('id').inTable('message_sends').onDelete('CASCADE');
    t.integer('subscriber_id').unsigned().notNullable();
    t.primary(['organization_id', 'relay_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('send_relay_ids');
}
