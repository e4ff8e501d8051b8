import type { Knex } from 'knex';
import { createTableOnce } from '../../src/db/migrations/changes-once';

export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'api_tokens', (t) => {
    t.increments('id').primary();
    t.integer('organization_id').unsigned().notNullable().references('id').inTable('organizations').onDelete('CASCADE');
    t.string('name', 191).notNullable();
    t.string('token_hash', 64).notNullable().unique('api_tokens_hash_unique');
    t.string('token_prefix', 16).notNullable();
    t.text('permissions').notNullable();
    t.text('ip_whitelist').nullable();
    t.datetime('expires_at', { precision: 3 }).nullable();
    t.datetime('revoked_at', { precision: 3 }).nullable();
    t.datetime('created_at', { precision: 3 }).notNullable();
    t.index(['organization_id', 'id'], 'api_tokens_org_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_tokens');
}
