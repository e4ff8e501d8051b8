import type { Knex } from 'knex';

/** What a server is to people and lists (docs/decisions.md, server-monitor, Server states). */
export const SERVER_STATES = ['pending', 'up', 'down', 'paused'] as const;
export type ServerState = (typeof SERVER_STATES)[number];

/**
 * The servers checked: of organizations with an active subscription, not paused; joined as `s` (server)
 * and `o` (organization).
 */
export const activeServers = (knex: Knex | Knex.Transaction) =>
  knex('monitor_servers as s')
    .join('organizations as o', 'o.id', 's.organization_id')
    .where('o.subscription_status', 'active')
    .whereNot('s.state', 'paused');
