import type { Knex } from 'knex';

/** What a server is to people and lists (docs/decisions.md, server-monitor, Server states). */
export const SERVER_STATES = ['pending', 'up', 'down', 'paused'] as const;
export type ServerState = (typeof SERVER_STATES)[number];

/** Servers of organizations with an active subscription, paused ones too; joined as `s` and `o`. */
export const serversOfActiveOrganizations = (knex: Knex | Knex.Transaction) =>
  knex('monitor_servers as s')
    .join('organizations as o', 'o.id', 's.organization_id')
    .where('o.subscription_status', 'active');

/** The servers checked: of organizations with an active subscription, not paused. */
export const activeServers = (knex: Knex | Knex.Transaction) =>
  serversOfActiveOrganizations(knex).whereNot('s.state', 'paused');
