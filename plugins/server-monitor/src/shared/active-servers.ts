import type { Knex } from 'knex';

/** Servers of organizations with an active subscription, joined as `s` (server) and `o` (organization). */
export const activeServers = (knex: Knex | Knex.Transaction) =>
  knex('monitor_servers as s')
    .join('organizations as o', 'o.id', 's.organization_id')
    .where('o.subscription_status', 'active');
