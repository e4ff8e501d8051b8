import type { Knex } from 'knex';
import { createTableOnce } from '../../src/db/migrations/changes-once';

/**
 * One row whose `revision` every token revocation raises. Each process polls it (a primary-key read)
 * and drops its cache of verified tokens when it changes, so a revocation by another process (the CLI,
 * another API process) takes effect everywhere within a second.
 */
export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'api_token_revision', (t) => {
    t.integer('id').unsigned().notNullable().primary();
    t.bigInteger('revision').unsigned().notNullable();
  });
  // Kept where a run that was not recorded made it: revocations may have raised it since.
  await knex('api_token_revision').insert({ id: 1, revision: 0 }).onConflict('id').ignore();
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('api_token_revision');
}
