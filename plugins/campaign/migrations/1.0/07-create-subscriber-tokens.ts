import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

/**
 * Words of names and emails, so `name:` and plain-word search are index range scans at any audience
 * size (a LIKE '%x%' over the subscribers table is a full scan).
 */
export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'subscriber_tokens', (t) => {
    t.integer('organization_id').unsigned().notNullable();
    t.integer('subscriber_id').unsigned().notNullable().references('id').inTable('subscribers').onDelete('CASCADE');
    // n: a word of the name; e: a piece of the email.
    t.string('kind', 1).notNullable();
    t.string('token', 64).notNullable();
    t.string('subscriber_status', 16).notNullable();
    // The lookup order is the primary key (one tree fewer per row than a hidden row id plus an index).
    t.primary(['organization_id', 'kind', 'token', 'subscriber_status', 'subscriber_id'], 'subscriber_tokens_pk');
    t.index(['subscriber_id'], 'subscriber_tokens_subscriber_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('subscriber_tokens');
}
