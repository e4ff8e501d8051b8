import type { Knex } from 'knex';
import { alterTableOnce, createTableOnce, dropColumnsOnce, withoutSqliteForeignKeys } from '@switchboard/core';

/** The columns 1.1 adds to `monitor_servers`, in the order its rollback drops them. */
export const SERVER_COLUMNS = [
  'is_up',
  'response_ms',
  'failing_since',
  'down_alerted',
  'uptime_24h',
  'uptime_7d',
  'uptime_30d',
  'uptime_stale',
  'uptime_at',
];

/**
 * Server monitor 1.1: what checks, heartbeats, SSL and uptime need. Each check's result is kept (uptime
 * is counted from them); a server knows whether it is up, since when it fails and whether that outage
 * was alerted, and its stored uptime figures; heartbeats, certificates, an alert outbox (an alert
 * that fails to send is tried again, not lost) and minute samples of SLA compliance.
 */
export async function up(knex: Knex): Promise<void> {
  await down(knex);
  await alterTableOnce(knex, 'monitor_servers', (t) => {
    t.boolean('is_up').nullable();
    t.integer('response_ms').unsigned().nullable();
    t.datetime('failing_since', { precision: 3 }).nullable();
    t.boolean('down_alerted').notNullable().defaultTo(false);
    t.decimal('uptime_24h', 6, 3).nullable();
    t.decimal('uptime_7d', 6, 3).nullable();
    t.decimal('uptime_30d', 6, 3).nullable();
    // Marked by a check or a request; the hourly calculation recomputes the marked ones.
    t.boolean('uptime_stale').notNullable().defaultTo(true);
    t.datetime('uptime_at', { precision: 3 }).nullable();
  });
  await alterTableOnce(knex, 'monitor_servers', (t) => {
    t.index(['uptime_stale', 'id'], 'monitor_servers_stale_idx');
  });
  await createTableOnce(knex, 'monitor_check_results', (t) => {
    t.bigIncrements('id');
    t.integer('server_id').unsigned().notNullable().references('id').inTable('monitor_servers').onDelete('CASCADE');
    t.datetime('checked_at', { precision: 3 }).notNullable();
    t.boolean('up').notNullable();
    t.string('status', 32).notNullable();
    t.integer('response_ms').unsigned().nullable();
    t.string('error', 255).nullable();
    t.index(['server_id', 'checked_at'], 'monitor_results_server_idx');
  });
  await createTableOnce(knex, 'monitor_heartbeats', (t) => {
    t.increments('id');
    t.integer('server_id').unsigned().notNullable().references('id').inTable('monitor_servers').onDelete('CASCADE');
    t.string('token', 64).notNullable().unique({ indexName: 'monitor_heartbeats_token_unique' });
    t.integer('interval_seconds').unsigned().notNullable();
    t.integer('grace_seconds').unsigned().notNullable();
    t.datetime('last_ping_at', { precision: 3 }).nullable();
    // When it is missing unless pinged: the last ping (or creation) plus interval and grace.
    t.datetime('due_at', { precision: 3 }).notNullable();
    // new (never pinged), up, down (missing: alerted once, a recovery notice when pings resume)
    t.string('state', 8).notNullable().defaultTo('new');
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.index(['server_id'], 'monitor_heartbeats_server_idx');
    t.index(['state', 'due_at'], 'monitor_heartbeats_due_idx');
  });
  await createTableOnce(knex, 'monitor_certificates', (t) => {
    t.integer('server_id')
      .unsigned()
      .notNullable()
      .primary()
      .references('id')
      .inTable('monitor_servers')
      .onDelete('CASCADE');
    t.datetime('valid_to', { precision: 3 }).nullable();
    t.string('issuer', 255).nullable();
    t.string('subject', 255).nullable();
    t.string('error', 255).nullable();
    // The last threshold alerted: soon (within the organization's days) or expired; null: none yet.
    t.string('alerted', 8).nullable();
    t.datetime('checked_at', { precision: 3 }).notNullable();
  });
  await createTableOnce(knex, 'monitor_alerts', (t) => {
    t.bigIncrements('id');
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.integer('server_id').unsigned().nullable();
    // server-down, server-up, heartbeat-missing, heartbeat-back, ssl-expiring, ssl-expired, test
    t.string('kind', 24).notNullable();
    t.string('channel', 8).notNullable();
    t.string('recipient', 191).notNullable();
    t.string('subject', 255).notNullable();
    t.text('body').notNullable();
    // pending, sent, failed (tried MAX times)
    t.string('state', 8).notNullable();
    t.integer('attempts').unsigned().notNullable().defaultTo(0);
    t.string('error', 255).nullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('sent_at', { precision: 3 }).nullable();
    t.index(['state', 'id'], 'monitor_alerts_state_idx');
  });
  // A minute's measured SLA compliance per tier: worker status, its recent breaches and the dashboard chart.
  await createTableOnce(knex, 'monitor_sla_samples', (t) => {
    t.datetime('sampled_at', { precision: 3 }).notNullable();
    t.string('tier', 8).notNullable();
    t.integer('checked').unsigned().notNullable();
    t.integer('total').unsigned().notNullable();
    t.primary(['sampled_at', 'tier']);
  });
  await alterTableOnce(knex, 'monitor_notification_settings', (t) => {
    t.integer('ssl_expiry_days').unsigned().notNullable().defaultTo(14);
  });
}

/** Not in one transaction: SQLite drops a column by copying its table (foreign keys must be off). */
export const config = { transaction: false };

export async function down(knex: Knex): Promise<void> {
  await withoutSqliteForeignKeys(knex, async () => {
    await knex.schema.dropTableIfExists('monitor_sla_samples');
    await knex.schema.dropTableIfExists('monitor_alerts');
    await knex.schema.dropTableIfExists('monitor_certificates');
    await knex.schema.dropTableIfExists('monitor_heartbeats');
    await knex.schema.dropTableIfExists('monitor_check_results');
    // In place on SQLite: a copy killed part-way (this runs again first thing in `up`) loses the id sequence.
    await dropColumnsOnce(knex, 'monitor_notification_settings', ['ssl_expiry_days']);
    // Each only while there (a run of up killed before the index, a rollback killed between columns).
    await alterTableOnce(knex, 'monitor_servers', (t) => t.dropIndex([], 'monitor_servers_stale_idx'));
    await dropColumnsOnce(knex, 'monitor_servers', SERVER_COLUMNS);
  });
}
