import type { Knex } from 'knex';
import { insertRows, parseJson } from '@switchboard/core';
import { subscriberTokens } from './tokens';
import type { MetaData } from './subscriber-schemas';

/**
 * A subscriber's search rows (the words of its name and email in subscriber_tokens, one row per meta
 * value in subscriber_meta) are derived from its subscribers row alone. They are found again by
 * primary key, computed from that row: the tables need no index on subscriber_id and no foreign key,
 * which spares an index tree and a foreign-key check for every row an import writes.
 */
export interface SearchSource {
  id: number;
  email: string;
  status: string;
  first_name?: string | null;
  last_name?: string | null;
  /** The object, or the JSON text of the subscribers column. */
  meta_data?: MetaData | string | null;
}

/** The subscribers columns a SearchSource is read from. */
export const SEARCH_SOURCE_COLUMNS = ['id', 'email', 'status', 'first_name', 'last_name', 'meta_data'];

type SearchRow = Record<string, string | number>;

interface SearchTable {
  name: string;
  /** Primary key after organization_id, subscriber_id last: rows are written in this order and deleted by it. */
  key: string[];
  rows(organizationId: number, s: SearchSource): SearchRow[];
}

const TABLES: SearchTable[] = [
  {
    name: 'subscriber_tokens',
    key: ['kind', 'token', 'subscriber_status', 'subscriber_id'],
    rows: (organizationId, s) =>
      subscriberTokens(s).map((t) => ({ organization_id: organizationId, kind: t.kind, token: t.token, subscriber_status: s.status, subscriber_id: s.id })),
  },
  {
    name: 'subscriber_meta',
    key: ['meta_key', 'meta_value', 'subscriber_status', 'subscriber_id'],
    rows: (organizationId, s) => {
      const meta = typeof s.meta_data === 'string' ? parseJson<MetaData>(s.meta_data, {}) : (s.meta_data ?? {});
      return Object.entries(meta).flatMap(([key, value]) =>
        [...new Set(Array.isArray(value) ? value : [value])].map((v) => ({
          organization_id: organizationId,
          meta_key: key,
          meta_value: v,
          subscriber_status: s.status,
          subscriber_id: s.id,
        })),
      );
    },
  },
];

const DELETE_PER_STATEMENT = 100;

/** The primary key before subscriber_id, as one string. */
function groupOf(table: SearchTable, row: SearchRow): string {
  let group = '';
  for (let i = 0; i < table.key.length - 1; i++) group += `${row[table.key[i]]}\u0000`;
  return group;
}

const keyOf = (table: SearchTable, row: SearchRow) => groupOf(table, row) + row.subscriber_id;

/**
 * Rows in primary-key order (as JavaScript orders strings: close enough to the collation for
 * appending within key ranges). Rows are grouped by the key before subscriber_id, so only the distinct
 * groups are sorted as strings; within a group, ids mostly arrive in order already.
 */
function inKeyOrder(table: SearchTable, rows: SearchRow[]): SearchRow[] {
  const groups = new Map<string, SearchRow[]>();
  for (const row of rows) {
    const group = groupOf(table, row);
    (groups.get(group) ?? groups.set(group, []).get(group)!).push(row);
  }
  const ordered: SearchRow[] = [];
  for (const group of [...groups.keys()].sort()) {
    for (const row of groups.get(group)!.sort((a, b) => (a.subscriber_id as number) - (b.subscriber_id as number))) ordered.push(row);
  }
  return ordered;
}

/**
 * Writes the search rows of new subscribers, in primary-key order so InnoDB appends within each key
 * range. A row that exists already is skipped: MySQL's case-insensitive collation takes `Pro` and
 * `pro` of one meta array as the same key.
 */
export async function insertSearchRows(trx: Knex.Transaction, organizationId: number, subscribers: SearchSource[]): Promise<void> {
  for (const table of TABLES) {
    const rows = inKeyOrder(table, subscribers.flatMap((s) => table.rows(organizationId, s)));
    await insertRows(trx, table.name, rows, { ignoreExisting: true });
  }
}

/** Deletes the search rows of subscribers as they are stored now. */
export async function deleteSearchRows(trx: Knex.Transaction, organizationId: number, subscribers: SearchSource[]): Promise<void> {
  for (const table of TABLES) await deleteRows(trx, table, organizationId, subscribers.flatMap((s) => table.rows(organizationId, s)));
}

/**
 * Moves each subscriber from the search rows of its stored row (`before[i]`) to those of `after[i]`.
 * A table whose rows differ is rewritten whole for that subscriber: deleting only the rows that
 * look different in JavaScript would also delete their case-insensitive twins on MySQL.
 */
export async function replaceSearchRows(trx: Knex.Transaction, organizationId: number, before: SearchSource[], after: SearchSource[]): Promise<void> {
  for (const table of TABLES) {
    const stale: SearchRow[] = [];
    const fresh: SearchRow[] = [];
    before.forEach((old, i) => {
      const oldRows = table.rows(organizationId, old);
      const newRows = table.rows(organizationId, after[i]);
      const oldKeys = new Set(oldRows.map((r) => keyOf(table, r)));
      if (oldKeys.size === newRows.length && newRows.every((r) => oldKeys.has(keyOf(table, r)))) return;
      stale.push(...oldRows);
      fresh.push(...newRows);
    });
    await deleteRows(trx, table, organizationId, stale);
    await insertRows(trx, table.name, inKeyOrder(table, fresh), { ignoreExisting: true });
  }
}

/** By full primary key, a bounded number of key ranges per statement. */
async function deleteRows(trx: Knex.Transaction, table: SearchTable, organizationId: number, rows: SearchRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += DELETE_PER_STATEMENT) {
    const chunk = rows.slice(i, i + DELETE_PER_STATEMENT);
    await trx(table.name)
      .where('organization_id', organizationId)
      .andWhere((q) => {
        for (const row of chunk) q.orWhere(Object.fromEntries(table.key.map((k) => [k, row[k]])));
      })
      .delete();
  }
}
