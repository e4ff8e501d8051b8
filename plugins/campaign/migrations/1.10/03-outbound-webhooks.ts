import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

/**
 * Outbound webhooks (docs/decisions.md, Outbound webhooks): each organization's subscriptions (url, the
 * events they want, a sealed signing secret) and one delivery row per event and subscription, written in
 * the transaction of the change it tells of, so a killed worker or an emptied Redis loses none.
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  // MySQL does not roll DDL back: a run that stopped halfway left tables to make again.
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.dropTableIfExists('webhooks');
  await createTableOnce(knex, 'webhooks', (t) => {
    t.increments('id');
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.string('name', 191).notNullable();
    t.string('url', 2048).notNullable();
    // JSON array of event names.
    t.text('events').notNullable();
    // Sealed with the application key (core SecretBox).
    t.text('secret').notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    t.string('disabled_reason', 255).nullable();
    // Failed tries in a row, and since when: a subscription failing long enough is deactivated.
    t.integer('failures_in_row').unsigned().notNullable().defaultTo(0);
    t.datetime('failing_since', { precision: 3 }).nullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.index(['organization_id'], 'webhooks_org_idx');
  });
  await createTableOnce(knex, 'webhook_deliveries', (t) => {
    t.bigIncrements('id');
    t.integer('organization_id').unsigned().notNullable();
    t.integer('webhook_id').unsigned().notNullable().references('id').inTable('webhooks').onDelete('CASCADE');
    // The event's id: the body's `id` and the `webhook-id` header, the same on every try.
    t.string('event_id', 40).notNullable();
    t.string('event', 32).notNullable();
    t.specificType('body', mysql ? 'mediumtext' : 'text').notNullable();
    // pending | delivered | failed
    t.string('state', 10).notNullable();
    t.integer('attempts').unsigned().notNullable().defaultTo(0);
    // When a pending delivery is due; a try in flight moves it ahead (its lease).
    t.datetime('next_attempt_at', { precision: 3 }).notNullable();
    t.integer('response_status').nullable();
    t.integer('latency_ms').unsigned().nullable();
    t.string('last_error', 255).nullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('finished_at', { precision: 3 }).nullable();
    t.index(['state', 'next_attempt_at'], 'webhook_deliveries_due_idx');
    t.index(['webhook_id', 'id'], 'webhook_deliveries_log_idx');
    t.index(['finished_at'], 'webhook_deliveries_finished_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('webhook_deliveries');
  await knex.schema.dropTableIfExists('webhooks');
}
