import type { Knex } from 'knex';
import { createTableOnce } from '../../src/db/migrations/changes-once';

export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'organizations', (t) => {
    t.increments('id').primary();
    t.string('name', 191).notNullable();
    t.string('selected_plan', 32).notNullable().defaultTo('free');
    t.string('subscription_status', 32).notNullable().defaultTo('active');
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.datetime('updated_at', { precision: 3 }).notNullable();
    t.index(['name'], 'organizations_name_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('organizations');
}
