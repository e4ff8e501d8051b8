import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'messages', (t) => {
    t.increments('id').primary();
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.string('name', 191).notNullable();
    t.string('subject', 255).notNullable();
    t.string('preheader', 255).nullable();
    t.text('content_html', 'mediumtext').nullable();
    t.text('content_text', 'mediumtext').nullable();
    t.string('from_name', 191).nullable();
    t.string('from_email', 191).nullable();
    t.string('status', 16).notNullable().defaultTo('draft');
    t.datetime('scheduled_at', { precision: 3 }).nullable();
    t.datetime('sent_at', { precision: 3 }).nullable();
    // Counters kept by sending and by provider events.
    for (const counter of [
      'count_sent',
      'count_delivered',
      'count_read',
      'count_clicked',
      'count_bounced',
      'count_stop',
      'count_complained',
    ]) {
      t.integer(counter).unsigned().notNullable().defaultTo(0);
    }
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.index(['organization_id', 'status', 'id'], 'messages_org_status_idx');
    t.index(['organization_id', 'created_at'], 'messages_org_created_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('messages');
}
