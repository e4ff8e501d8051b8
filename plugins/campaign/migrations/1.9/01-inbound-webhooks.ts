import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

/**
 * Inbound provider webhooks: each organization's endpoints (provider, name, sealed secret) and the events
 * received at them. An event is recorded once per (organization, provider, provider event id): a
 * provider's retry of it finds its row and changes nothing. `receipt` names the request that wrote a row,
 * so a request applies the effects of exactly the events it recorded. Each message's events per hour and
 * day are counted as they arrive (its statistics' timeline).
 */
export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  // MySQL does not roll DDL back: a run that stopped halfway left tables to make again.
  await knex.schema.dropTableIfExists('message_event_rollups');
  await knex.schema.dropTableIfExists('inbound_events');
  await knex.schema.dropTableIfExists('inbound_webhooks');
  await createTableOnce(knex, 'inbound_webhooks', (t) => {
    t.increments('id');
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.string('provider', 32).notNullable();
    t.string('name', 191).notNullable();
    // Sealed with the application key (core SecretBox); null: no secret.
    t.text('secret').nullable();
    t.boolean('is_active').notNullable().defaultTo(true);
    // What some providers need besides the secret, as JSON: provider_d's allowed SNS topics.
    t.text('options').nullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.index(['organization_id', 'provider'], 'inbound_webhooks_org_provider_idx');
  });
  // No foreign keys: events arrive by thousands a second, and their rows outlive a deleted endpoint.
  await createTableOnce(knex, 'inbound_events', (t) => {
    t.bigIncrements('id');
    t.integer('organization_id').unsigned().notNullable();
    t.integer('webhook_endpoint_id').unsigned().nullable();
    t.string('provider', 32).notNullable();
    t.string('provider_event_id', 191).notNullable();
    t.integer('message_id').unsigned().nullable();
    t.integer('subscriber_id').unsigned().nullable();
    t.string('recipient', 191).nullable();
    t.string('event_type', 16).notNullable();
    t.string('bounce', 4).nullable();
    t.string('provider_message_id', 191).nullable();
    t.specificType('payload', mysql ? 'mediumtext' : 'text').notNullable();
    t.datetime('event_at', { precision: 3 }).notNullable();
    t.datetime('received_at', { precision: 3 }).notNullable();
    t.string('receipt', 32).notNullable();
    t.unique(['organization_id', 'provider', 'provider_event_id'], { indexName: 'inbound_events_once' });
    t.index(['message_id', 'event_type'], 'inbound_events_message_idx');
  });
  // A message's events per hour and per day, kept as events are recorded: its timeline reads these.
  await createTableOnce(knex, 'message_event_rollups', (t) => {
    t.integer('message_id').unsigned().notNullable().references('id').inTable('messages').onDelete('CASCADE');
    // h: an hour, d: a day (UTC)
    t.string('period', 1).notNullable();
    t.datetime('period_start', { precision: 3 }).notNullable();
    t.string('event_type', 16).notNullable();
    t.integer('events').unsigned().notNullable();
    t.primary(['message_id', 'period', 'period_start', 'event_type']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('message_event_rollups');
  await knex.schema.dropTableIfExists('inbound_events');
  await knex.schema.dropTableIfExists('inbound_webhooks');
}
