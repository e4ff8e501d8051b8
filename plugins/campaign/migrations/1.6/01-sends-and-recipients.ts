import type { Knex } from 'knex';
import { alterTableOnce, createTableOnce, dropColumnsOnce, withoutSqliteForeignKeys } from '@switchboard/core';

/**
 * Sending (docs/architecture.md, Sending): a send is one delivery of a message to lists (a message's
 * first send, a send again after a cancel, or a schedule's run); its recipients are rows, one per
 * subscriber, whose state says who has been sent what. The queue only carries ranges of them. A
 * schedule names the lists its runs send to.
 */
export async function up(knex: Knex): Promise<void> {
  // MySQL does not roll DDL back: a run that stopped halfway left tables to make again.
  await down(knex);
  await createTableOnce(knex, 'message_sends', (t) => {
    t.increments('id').primary();
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.integer('message_id').unsigned().notNullable().references('id').inTable('messages').onDelete('CASCADE');
    t.integer('schedule_id').unsigned().nullable();
    // pending (waits for scheduled_at), active, paused (failure rate), sent, cancelled
    t.string('status', 16).notNullable();
    t.text('list_ids').notNullable();
    t.boolean('test_mode').notNullable().defaultTo(false);
    t.datetime('scheduled_at', { precision: 3 }).nullable();
    t.integer('recipients').unsigned().notNullable().defaultTo(0);
    t.integer('sent').unsigned().notNullable().defaultTo(0);
    t.integer('failed').unsigned().notNullable().defaultTo(0);
    t.integer('skipped').unsigned().notNullable().defaultTo(0);
    t.string('pause_reason', 255).nullable();
    t.datetime('started_at', { precision: 3 }).nullable();
    t.datetime('finished_at', { precision: 3 }).nullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.index(['message_id', 'id'], 'message_sends_message_idx');
    // What the watchdog asks every few seconds: sends to start or to keep going.
    t.index(['status', 'scheduled_at'], 'message_sends_status_idx');
  });
  await createTableOnce(knex, 'send_recipients', (t) => {
    t.integer('send_id').unsigned().notNullable().references('id').inTable('message_sends').onDelete('CASCADE');
    t.integer('subscriber_id').unsigned().notNullable();
    // queued, sending (claimed by a worker since claimed_at), sent, failed, skipped
    t.string('state', 8).notNullable();
    t.tinyint('attempts').unsigned().notNullable().defaultTo(0);
    // The worker's token and time of a claim: a claim older than a lease is given back (watchdog).
    t.string('claim', 16).nullable();
    t.datetime('claimed_at', { precision: 3 }).nullable();
    t.datetime('sent_at', { precision: 3 }).nullable();
    t.string('mail_id', 191).nullable();
    t.string('error', 255).nullable();
    // The first open and click of this mail (tracking, when the message asks for it).
    t.datetime('opened_at', { precision: 3 }).nullable();
    t.datetime('clicked_at', { precision: 3 }).nullable();
    t.primary(['send_id', 'subscriber_id']);
    t.index(['send_id', 'state', 'subscriber_id'], 'send_recipients_state_idx');
  });
  // The lists a schedule's runs send to (JSON ids); null: those of the message's latest send.
  await alterTableOnce(knex, 'message_schedules', (t) => {
    t.text('list_ids').nullable();
  });
  // Open and click tracking, off unless a message asks for it.
  await alterTableOnce(knex, 'messages', (t) => {
    t.boolean('track_opens').notNullable().defaultTo(false);
    t.boolean('track_clicks').notNullable().defaultTo(false);
  });
}

/**
 * Not in one transaction: the rollback drops tables with SQLite's foreign keys off, which SQLite ignores
 * inside a transaction (it dropped columns by copying `messages`, which cascaded to every schedule, until
 * session 33 dropped them in place).
 */
export const config = { transaction: false };

export async function down(knex: Knex): Promise<void> {
  await withoutSqliteForeignKeys(knex, async () => {
    // In place on SQLite: a copy killed part-way would hand deleted messages' ids out again.
    await dropColumnsOnce(knex, 'messages', ['track_opens', 'track_clicks']);
    await dropColumnsOnce(knex, 'message_schedules', ['list_ids']);
    await knex.schema.dropTableIfExists('send_recipients');
    await knex.schema.dropTableIfExists('message_sends');
  });
}
