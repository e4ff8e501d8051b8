import type { Knex } from 'knex';
import { createTableOnce } from '@switchboard/core';

/**
 * When each tier's checks were last dispatched: a repeated check/{type} call within half a cadence does
 * nothing (docs/decisions.md, server-monitor, Dispatch).
 */
export async function up(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'monitor_dispatches', (t) => {
    t.string('tier', 8).notNullable().primary();
    t.datetime('dispatched_at', { precision: 3 }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('monitor_dispatches');
}
