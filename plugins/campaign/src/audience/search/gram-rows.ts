import type { Knex } from 'knex';
import { insertValues } from '@switchboard/core';
import { searchTexts } from './folding';
import type { SearchSource } from './search-source';
import {
  addGrams,
  BLOCK_BITS,
  BLOCK_SIZE,
  entrySize,
  GramKey,
  gramText,
  placementOf,
  Scope,
  writeEntry,
} from './grams';

export const GRAM_TABLE = 'subscriber_grams';

type GramSource = Pick<SearchSource, 'id' | 'email' | 'status' | 'first_name' | 'last_name'>;

/**
 * Memberships are in the index too, under this status whatever the subscriber's: key `l<list id>`. A
 * search with a list then intersects sets instead of reading the list's members (docs/architecture.md).
 */
export const MEMBERSHIP_STATUS = '';
export const membershipGram = (listId: number) => `l${listId}`;

/**
 * Adds subscribers to the substring index under their status. Nothing is ever removed: a subscriber
 * whose name, email or status changed, or who was deleted, leaves entries that no longer hold, and
 * every candidate the index gives is confirmed against its subscribers row (docs/architecture.md).
 */
export async function appendGramRows(trx: Knex | Knex.Transaction, organizationId: number, sources: GramSource[]) {
  // status -> block -> scope -> gram -> offsets
  const groups = new Map<string, Map<number, Record<Scope, Map<GramKey, number[]>>>>();
  for (const s of [...sources].sort((a, b) => a.id - b.id)) {
    const blocks = groups.get(s.status) ?? groups.set(s.status, new Map()).get(s.status)!;
    const block = s.id >> BLOCK_BITS;
    const scopes = blocks.get(block) ?? blocks.set(block, { n: new Map(), e: new Map() }).get(block)!;
    const texts = searchTexts(s);
    addGrams(scopes.n, texts.name, s.id & (BLOCK_SIZE - 1));
    addGrams(scopes.e, texts.email, s.id & (BLOCK_SIZE - 1));
  }
  const rows = [...groups].map(([status, blocks]) => ({
    status,
    sets: (function* () {
      for (const [block, scopes] of blocks)
        for (const scope of ['n', 'e'] as Scope[])
          for (const [key, offsets] of scopes[scope]) yield { block, gram: scope + gramText(key), offsets };
    })(),
  }));
  await appendSets(trx, organizationId, rows);
}

/** Adds memberships (list, subscriber) to the substring index; removed ones stay, as above. */
export async function appendMembershipRows(
  trx: Knex | Knex.Transaction,
  organizationId: number,
  memberships: Array<{ listId: number; id: number }>,
) {
  // block -> list -> offsets
  const blocks = new Map<number, Map<number, number[]>>();
  for (const m of [...memberships].sort((a, b) => a.id - b.id)) {
    const block = m.id >> BLOCK_BITS;
    const lists = blocks.get(block) ?? blocks.set(block, new Map()).get(block)!;
    const offsets = lists.get(m.listId) ?? lists.set(m.listId, []).get(m.listId)!;
    if (offsets[offsets.length - 1] !== (m.id & (BLOCK_SIZE - 1))) offsets.push(m.id & (BLOCK_SIZE - 1));
  }
  const sets = (function* () {
    for (const [block, lists] of blocks)
      for (const [listId, offsets] of lists) yield { block, gram: membershipGram(listId), offsets };
  })();
  await appendSets(trx, organizationId, [{ status: MEMBERSHIP_STATUS, sets }]);
}

interface Entry {
  block: number;
  gram: string;
  offsets: number[];
}

/**
 * Writes sets (gram, block, ascending offsets) as one row per (status, bucket of grams, block) of those
 * written together, keyed by the smallest id in it, so an import chunk of consecutive new ids writes a
 * few hundred rows instead of one per subscriber and gram. A row whose key exists appends its entries.
 */
export async function appendSets(
  trx: Knex | Knex.Transaction,
  organizationId: number,
  byStatus: Array<{ status: string; sets: Iterable<Entry> }>,
) {
  const values: unknown[] = [];
  // In key order (status, bucket, block) so InnoDB appends within each key range.
  for (const { status, sets } of [...byStatus].sort((a, b) => (a.status < b.status ? -1 : 1))) {
    const rows = new Map<
      number,
      { block: number; bucket: number; first: number; low: number; high: number; size: number; entries: Entry[] }
    >();
    for (const entry of sets) {
      const { block, gram, offsets } = entry;
      const { bucket, low, high } = placementOf(gram);
      const id = bucket * 2 ** 32 + block;
      const row =
        rows.get(id) ??
        rows.set(id, { block, bucket, first: offsets[0], low: 0, high: 0, size: 0, entries: [] }).get(id)!;
      row.low = (row.low | low) >>> 0;
      row.high = (row.high | high) >>> 0;
      row.first = Math.min(row.first, offsets[0]);
      row.size += entrySize(gram, offsets);
      row.entries.push(entry);
    }
    for (const id of [...rows.keys()].sort((a, b) => a - b)) {
      const { block, bucket, first, low, high, size, entries } = rows.get(id)!;
      // One buffer per row: an import chunk writes about 1,700 entries.
      const grams = Buffer.allocUnsafe(size);
      entries.reduce((at, { gram, offsets }) => writeEntry(grams, at, gram, offsets), 0);
      values.push(status, bucket, block, block * BLOCK_SIZE + first, low, high, grams);
    }
  }
  if (!values.length) return;
  await insertValues(
    trx,
    GRAM_TABLE,
    {
      columns: ['subscriber_status', 'bucket', 'block', 'part', 'bloom_low', 'bloom_high', 'grams'],
      values,
      shared: { organization_id: organizationId },
    },
    {
      appendOnConflict: {
        key: ['organization_id', 'subscriber_status', 'bucket', 'block', 'part'],
        column: 'grams',
        orColumns: ['bloom_low', 'bloom_high'],
      },
    },
  );
}

/** Whether a change moves a subscriber to grams or a status the index does not hold it under yet. */
export function gramsChanged(before: GramSource, after: GramSource): boolean {
  if (before.status !== after.status) return true;
  const a = searchTexts(before);
  const b = searchTexts(after);
  return a.name !== b.name || a.email !== b.email;
}
