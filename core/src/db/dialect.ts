import type { Knex } from 'knex';
import type { Dialect } from './knex';

export const dialectOfKnex = (knex: Knex): Dialect =>
  String(knex.client.config.client).includes('sqlite') ? 'sqlite' : 'mysql';
