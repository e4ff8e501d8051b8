import type { Knex } from 'knex';
import { createTableOnce } from '../../src/db/migrations/changes-once';

/**
 * Locks the processes sharing a database hold when they share no Redis (core DatabaseLocks): the
 * scheduler's leader lock of the embedded default, so two processes on one SQLite file run one scheduler.
 * A lock is its name, its holder's random token, the holder (JSON: machine, process id and start, so that
 * a process restarted after a crash takes over at once) and when it lapses (ms since the epoch).
 */
export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'process_locks', (t) => {
    t.string('name', 191).notNullable().primary();
    t.string('token', 64).notNullable();
    t.string('holder', 191).notNullable();
    t.bigInteger('expires_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('process_locks');
}
