import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'message_schedules', (t) => {
    t.increments('id').primary();
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.integer('message_id').unsigned().notNullable().references('id').inTable('messages').onDelete('CASCADE');
    t.string('frequency', 16).notNullable();
    t.string('send_time', 5).notNullable();
    t.string('timezone', 64).notNullable();
    t.tinyint('day_of_week').nullable();
    t.integer('max_runs').unsigned().nullable();
    t.integer('run_count').unsigned().notNullable().defaultTo(0);
    t.boolean('is_active').notNullable().defaultTo(true);
    t.datetime('next_run_at', { precision: 3 }).nullable();
    t.datetime('last_run_at', { precision: 3 }).nullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.index(['organization_id', 'message_id'], 'message_schedules_org_message_idx');
    // What the scheduler asks every minute: active schedules that are due.
    t.index(['is_active', 'next_run_at'], 'message_schedules_due_idx');
  });

  await createTableOnce(knex, 'changelog_subscriptions', (t) => {
    t.increments('id').primary();
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.string('email', 191).notNullable();
    t.string('webhook_url', 512).notNullable();
    t.string('webhook_url_hash', 64).notNullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.unique(['organization_id', 'email', 'webhook_url_hash'], { indexName: 'changelog_subscriptions_unique' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('changelog_subscriptions');
  await knex.schema.dropTable('message_schedules');
}
