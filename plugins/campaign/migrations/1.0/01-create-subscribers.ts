import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

export async function up(knex: Knex): Promise<void> {
  const mysql = knex.client.config.client === 'mysql2';
  await createTableOnce(knex, 'subscribers', (t) => {
    t.increments('id').primary();
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    // Binary collation: uniqueness is on the normalized address exactly, as on SQLite.
    const email = t.string('email', 191).notNullable();
    if (mysql) email.collate('utf8mb4_bin');
    t.string('first_name', 191).nullable();
    t.string('last_name', 191).nullable();
    t.string('company_name', 191).nullable();
    t.string('phone', 64).nullable();
    t.string('job_title', 191).nullable();
    t.string('status', 16).notNullable();
    t.text('meta_data').nullable();
    t.datetime('confirmed_at', { precision: 3 }).nullable();
    t.datetime('unsubscribed_at', { precision: 3 }).nullable();
    t.string('unsubscribe_reason', 191).nullable();
    t.text('unsubscribe_feedback').nullable();
    t.integer('messages_received').unsigned().notNullable().defaultTo(0);
    t.integer('messages_opened').unsigned().notNullable().defaultTo(0);
    t.integer('messages_clicked').unsigned().notNullable().defaultTo(0);
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.unique(['organization_id', 'email'], { indexName: 'subscribers_org_email_unique' });
    t.index(['organization_id', 'status', 'id'], 'subscribers_org_status_idx');
    t.index(['organization_id', 'status', 'created_at'], 'subscribers_org_status_created_idx');
  });

  // Counts per status, kept by every write, so list totals never count the table.
  await createTableOnce(knex, 'subscriber_counts', (t) => {
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.string('status', 16).notNullable();
    t.integer('count').notNullable().defaultTo(0);
    t.primary(['organization_id', 'status']);
  });

  // meta_data as key/value rows (one per array element), searchable through an index.
  await createTableOnce(knex, 'subscriber_meta', (t) => {
    t.integer('organization_id').unsigned().notNullable();
    t.integer('subscriber_id').unsigned().notNullable().references('id').inTable('subscribers').onDelete('CASCADE');
    t.string('meta_key', 64).notNullable();
    t.string('meta_value', 191).notNullable();
    // The subscriber's status, copied so "meta value and status" is one index range in id order.
    t.string('subscriber_status', 16).notNullable();
    // The lookup order is the primary key: InnoDB then keeps one tree fewer per row than with a
    // hidden row id plus a secondary index, which is most of an import's write work.
    t.primary(
      ['organization_id', 'meta_key', 'meta_value', 'subscriber_status', 'subscriber_id'],
      'subscriber_meta_pk',
    );
    t.index(['subscriber_id'], 'subscriber_meta_subscriber_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('subscriber_meta');
  await knex.schema.dropTable('subscriber_counts');
  await knex.schema.dropTable('subscribers');
}
