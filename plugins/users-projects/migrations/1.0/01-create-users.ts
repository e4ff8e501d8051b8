import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'users', (t) => {
    t.increments('id').primary();
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.string('name', 191).notNullable();
    t.string('email', 191).notNullable();
    t.string('role', 16).notNullable().defaultTo('member');
    t.string('phone', 32).nullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.unique(['organization_id', 'email'], { indexName: 'users_org_email_unique' });
    t.index(['organization_id', 'role', 'id'], 'users_org_role_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('users');
}
