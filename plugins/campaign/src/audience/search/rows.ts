import type { Knex } from 'knex';
import { insertValues, parseJson, RowValues } from '@switchboard/core';
import { appendGramRows, gramsChanged } from './gram-rows';
import type { SearchSource } from './search-source';
import type { MetaData } from '../../shared/meta-data';

/** The subscribers columns a SearchSource is read from. */
export const SEARCH_SOURCE_COLUMNS = ['id', 'email', 'status', 'first_name', 'last_name', 'meta_data'];

type SearchRow = Record<string, string | number>;
type Pair = [string, string];

/**
 * A search table's primary key is (organization_id, first, second, subscriber_status, subscriber_id),
 * `columns` naming first and second.
 */
interface SearchTable {
  name: string;
  columns: Pair;
  /** The (first, second) values of a subscriber's rows, each once. */
  pairs(s: SearchSource): Pair[];
}

const TABLES: SearchTable[] = [
  {
    name: 'subscriber_meta',
    columns: ['meta_key', 'meta_value'],
    pairs: (s) => {
      const meta = typeof s.meta_data === 'string' ? parseJson<MetaData>(s.meta_data, {}) : (s.meta_data ?? {});
      const pairs: Pair[] = [];
      for (const key in meta) {
        const value = meta[key];
        for (const v of Array.isArray(value) ? new Set(value) : [value]) pairs.push([key, v]);
      }
      return pairs;
    },
  },
];

const DELETE_PER_STATEMENT = 100;

/** The primary key between organization_id and subscriber_id as one string, to compare rows. */
const keyOf = (pair: Pair, status: string) => `${pair[0]}\u0000${pair[1]}\u0000${status}`;

/** Keys in JavaScript's string order: close enough to the collation for appending within key ranges. */
const sortedKeys = <T>(map: Map<string, T>) => [...map.keys()].sort();

/**
 * The rows of subscribers as flat values in primary-key order, so InnoDB appends within each key
 * range. Rows are grouped by the key before subscriber_id, level by level (no key strings to build
 * and hash per row), and only the distinct keys are sorted; within a group, ids mostly arrive in
 * order already. The status is a shared value when every subscriber has the same.
 */
function keyOrderedValues(table: SearchTable, organizationId: number, sources: SearchSource[]): RowValues {
  const tree = new Map<string, Map<string, Map<string, number[]>>>();
  const status = sources[0]?.status;
  let mixed = false;
  for (const s of sources) {
    if (s.status !== status) mixed = true;
    for (const [first, second] of table.pairs(s)) {
      const seconds = tree.get(first) ?? tree.set(first, new Map()).get(first)!;
      const statuses = seconds.get(second) ?? seconds.set(second, new Map()).get(second)!;
      const ids = statuses.get(s.status);
      if (ids) ids.push(s.id);
      else statuses.set(s.status, [s.id]);
    }
  }
  const values: unknown[] = [];
  for (const first of sortedKeys(tree)) {
    const seconds = tree.get(first)!;
    for (const second of sortedKeys(seconds)) {
      const statuses = seconds.get(second)!;
      for (const own of sortedKeys(statuses)) {
        for (const id of statuses.get(own)!.sort((a, b) => a - b)) {
          if (mixed) values.push(first, second, own, id);
          else values.push(first, second, id);
        }
      }
    }
  }
  return mixed
    ? {
        columns: [...table.columns, 'subscriber_status', 'subscriber_id'],
        values,
        shared: { organization_id: organizationId },
      }
    : {
        columns: [...table.columns, 'subscriber_id'],
        values,
        shared: { organization_id: organizationId, subscriber_status: status },
      };
}

/** One subscriber's rows as their primary key after organization_id, for deleting them. */
const keysOf = (table: SearchTable, s: SearchSource): SearchRow[] =>
  table.pairs(s).map(([first, second]) => ({
    [table.columns[0]]: first,
    [table.columns[1]]: second,
    subscriber_status: s.status,
    subscriber_id: s.id,
  }));

/**
 * Writes the search rows of new subscribers, in primary-key order so InnoDB appends within each key
 * range. A row that exists already is skipped: MySQL's case-insensitive collation takes `Pro` and
 * `pro` of one meta array as the same key.
 */
export async function insertSearchRows(
  trx: Knex.Transaction,
  organizationId: number,
  subscribers: SearchSource[],
): Promise<void> {
  for (const table of TABLES)
    await insertValues(trx, table.name, keyOrderedValues(table, organizationId, subscribers), { ignoreExisting: true });
  await appendGramRows(trx, organizationId, subscribers);
}

/** Deletes the search rows of subscribers as they are stored now (the substring index keeps its entries). */
export async function deleteSearchRows(
  trx: Knex.Transaction,
  organizationId: number,
  subscribers: SearchSource[],
): Promise<void> {
  for (const table of TABLES)
    await deleteRows(
      trx,
      table,
      organizationId,
      subscribers.flatMap((s) => keysOf(table, s)),
    );
}

/**
 * Moves each subscriber from the search rows of its stored row (`before[i]`) to those of `after[i]`.
 * A table whose rows differ is rewritten whole for that subscriber: deleting only the rows that
 * look different in JavaScript would also delete their case-insensitive twins on MySQL.
 */
export async function replaceSearchRows(
  trx: Knex.Transaction,
  organizationId: number,
  before: SearchSource[],
  after: SearchSource[],
): Promise<void> {
  for (const table of TABLES) {
    const stale: SearchRow[] = [];
    const changed: SearchSource[] = [];
    before.forEach((old, i) => {
      const oldKeys = new Set(table.pairs(old).map((pair) => keyOf(pair, old.status)));
      const newPairs = table.pairs(after[i]);
      if (oldKeys.size === newPairs.length && newPairs.every((pair) => oldKeys.has(keyOf(pair, after[i].status))))
        return;
      stale.push(...keysOf(table, old));
      changed.push(after[i]);
    });
    await deleteRows(trx, table, organizationId, stale);
    await insertValues(trx, table.name, keyOrderedValues(table, organizationId, changed), { ignoreExisting: true });
  }
  await appendGramRows(
    trx,
    organizationId,
    after.filter((s, i) => gramsChanged(before[i], s)),
  );
}

/** By full primary key, a bounded number of key ranges per statement. */
async function deleteRows(
  trx: Knex.Transaction,
  table: SearchTable,
  organizationId: number,
  rows: SearchRow[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += DELETE_PER_STATEMENT) {
    const chunk = rows.slice(i, i + DELETE_PER_STATEMENT);
    // The whole key in every branch: SQLite then looks each one up in the primary key (with the
    // organization outside the OR it scanned the organization's rows once per statement: 24 s to delete
    // 1000 subscribers of 20,000).
    await trx(table.name)
      .where((q) => {
        for (const key of chunk) q.orWhere({ organization_id: organizationId, ...key });
      })
      .delete();
  }
}

/**
 * The meta rows of subscribers per table, as plain objects in primary-key order (an
 * import also writes the substring index, search/gram-rows.ts), for code that writes them another way
 * (the audience benchmark's plain-knex baseline).
 */
export function searchRowsByTable(
  organizationId: number,
  subscribers: SearchSource[],
): Array<{ table: string; rows: SearchRow[] }> {
  return TABLES.map((table) => {
    const { columns, values, shared } = keyOrderedValues(table, organizationId, subscribers);
    const rows: SearchRow[] = [];
    for (let i = 0; i < values.length; i += columns.length) {
      const row: SearchRow = { ...(shared as SearchRow) };
      columns.forEach((column, j) => (row[column] = values[i + j] as string | number));
      rows.push(row);
    }
    return { table: table.name, rows };
  });
}
