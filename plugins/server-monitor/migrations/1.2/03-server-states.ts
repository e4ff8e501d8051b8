import type { Knex } from 'knex';
import { alterTableOnce, withoutSqliteForeignKeys } from '@switchboard/core';

/**
 * A server's state for people and lists (issue 25): `pending` (never checked), `up`, `down` or `paused`
 * (nothing checks it), kept with each check so a list of what is down is an index range: by organization
 * (the servers API's filter) and across organizations, longest outage first (the dashboard).
 * Servers of an older schema take the state their last check gave them.
 */
export async function up(knex: Knex): Promise<void> {
  await addServerStates(knex);
  await knex('monitor_servers').where({ is_up: true }).update({ state: 'up' });
  await knex('monitor_servers').where({ is_up: false }).update({ state: 'down' });
}

/** Not in one transaction: dropping a column of `monitor_servers` copies it in SQLite (withoutSqliteForeignKeys). */
export const config = { transaction: false };

export async function down(knex: Knex): Promise<void> {
  if (!(await knex.schema.hasColumn('monitor_servers', 'state'))) return;
  await alterTableOnce(knex, 'monitor_servers', (t) => {
    t.dropIndex([], 'monitor_servers_state_idx');
    t.dropIndex([], 'monitor_servers_outage_idx');
  });
  await withoutSqliteForeignKeys(knex, () =>
    alterTableOnce(knex, 'monitor_servers', (t) => {
      t.dropColumn('state');
      t.dropColumn('paused_at');
    }),
  );
}

/** The columns alone (upgrade tests give them to a schema of an older version, which today's code writes). */
export async function addServerStates(knex: Knex): Promise<void> {
  await alterTableOnce(knex, 'monitor_servers', (t) => {
    t.string('state', 8).notNullable().defaultTo('pending');
    t.datetime('paused_at', { precision: 3 }).nullable();
  });
  await alterTableOnce(knex, 'monitor_servers', (t) => {
    t.index(['organization_id', 'state', 'id'], 'monitor_servers_state_idx');
    t.index(['state', 'failing_since'], 'monitor_servers_outage_idx');
  });
}
