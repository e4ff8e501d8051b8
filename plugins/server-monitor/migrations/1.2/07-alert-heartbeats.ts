import type { Knex } from 'knex';
import { alterTableOnce, dropColumnsOnce } from '@switchboard/core';

/**
 * A heartbeat's alerts name their heartbeat (docs/decisions.md, server-monitor, Alerts of a heartbeat): its
 * "back" waits for, lapses with and tells after its own "missing", not another heartbeat's of the same
 * server. Alerts raised before name the server alone (null). The index serves the reads of a server's
 * latest alert of a kind, which scanned the table back from its newest row.
 */
export async function up(knex: Knex): Promise<void> {
  await alterTableOnce(knex, 'monitor_alerts', (t) => {
    t.integer('heartbeat_id').unsigned().nullable();
    t.index(['server_id', 'kind', 'id'], 'monitor_alerts_server_kind_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await alterTableOnce(knex, 'monitor_alerts', (t) => t.dropIndex([], 'monitor_alerts_server_kind_idx'));
  await dropColumnsOnce(knex, 'monitor_alerts', ['heartbeat_id']);
}
