import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'sender_profiles', (t) => {
    t.increments('id').primary();
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.string('name', 191).notNullable();
    t.string('from_name', 191).notNullable();
    t.string('from_email', 191).notNullable();
    t.string('reply_to_email', 191).nullable();
    t.boolean('is_default').notNullable().defaultTo(false);
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.index(['organization_id', 'is_default'], 'sender_profiles_org_default_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('sender_profiles');
}
