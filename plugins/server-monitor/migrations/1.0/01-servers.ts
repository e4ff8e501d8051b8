import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

/**
 * Server monitor 1.0, the original schema: servers of organizations, their status log, and one
 * notification setting per organization in its first shape (an e-mail list and an SMS flag; 1.2
 * turns it into the administrators array).
 */
export async function up(knex: Knex): Promise<void> {
  // MySQL does not roll DDL back: a run that stopped halfway left tables to make again.
  await down(knex);
  await createTableOnce(knex, 'monitor_servers', (t) => {
    t.increments('id');
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.string('title', 191).notNullable();
    t.string('endpoint', 2048).notNullable();
    // An HTTP-style code such as 200 (imported, or the last check's answer); see docs/decisions.md.
    t.string('status', 32).nullable();
    t.text('notes').nullable();
    t.datetime('last_checked_at', { precision: 3 }).nullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.index(['organization_id', 'id'], 'monitor_servers_org_idx');
  });
  await createTableOnce(knex, 'monitor_logs', (t) => {
    t.bigIncrements('id');
    t.integer('server_id').unsigned().notNullable().references('id').inTable('monitor_servers').onDelete('CASCADE');
    t.string('original_status', 32).nullable();
    t.string('updated_status', 32).notNullable();
    t.string('note', 1024).notNullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.index(['server_id', 'created_at'], 'monitor_logs_server_idx');
  });
  await createTableOnce(knex, 'monitor_notification_settings', (t) => {
    t.integer('organization_id')
      .unsigned()
      .notNullable()
      .primary()
      .references('id')
      .inTable('organizations')
      .onDelete('CASCADE');
    // 1.0 and 1.1: a JSON array of addresses alerted by e-mail, and one SMS flag for the organization.
    t.text('emails').nullable();
    t.boolean('sms_enabled').notNullable().defaultTo(false);
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('monitor_notification_settings');
  await knex.schema.dropTableIfExists('monitor_logs');
  await knex.schema.dropTableIfExists('monitor_servers');
}
