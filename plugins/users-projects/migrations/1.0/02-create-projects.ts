import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'projects', (t) => {
    t.increments('id').primary();
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.string('name', 191).notNullable();
    t.text('description').nullable();
    // A project outlives its owner: deleting the user leaves the project without one.
    t.integer('owner_id').unsigned().nullable().references('id').inTable('users').onDelete('SET NULL');
    t.string('status', 16).notNullable().defaultTo('active');
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.index(['organization_id', 'status', 'id'], 'projects_org_status_idx');
    t.index(['organization_id', 'owner_id'], 'projects_org_owner_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('projects');
}
