import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'lists', (t) => {
    t.increments('id').primary();
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.string('name', 191).notNullable();
    t.string('code', 64).notNullable();
    t.text('description').nullable();
    // Kept by every membership and status change: reading them never counts members.
    t.integer('subscriber_count').notNullable().defaultTo(0);
    t.integer('active_count').notNullable().defaultTo(0);
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.unique(['organization_id', 'code'], { indexName: 'lists_org_code_unique' });
  });

  await createTableOnce(knex, 'list_subscribers', (t) => {
    // No foreign key to lists: InnoDB's check would share-lock the list row on every insert, and the
    // import's closing update of the list counters would deadlock with it. Deleting a list deletes these.
    t.integer('list_id').unsigned().notNullable();
    t.integer('subscriber_id').unsigned().notNullable().references('id').inTable('subscribers').onDelete('CASCADE');
    // The subscriber's status, copied here so "members of a list with a status" is one index range.
    t.string('subscriber_status', 16).notNullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    // Members by status in id order is what listing reads; uniqueness of (list, subscriber) is kept by
    // the unique index below.
    t.primary(['list_id', 'subscriber_status', 'subscriber_id'], 'list_subscribers_pk');
    t.unique(['list_id', 'subscriber_id'], { indexName: 'list_subscribers_member_unique' });
    t.index(['subscriber_id'], 'list_subscribers_subscriber_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('list_subscribers');
  await knex.schema.dropTable('lists');
}
