import type { Knex } from 'knex';
import { insertValues } from '@switchboard/core';
import { searchTexts } from './folding';
import { addGrams, BLOCK_BITS, BLOCK_SIZE, encodeOffsets, GramKey, gramText, Scope } from './grams';

export const GRAM_TABLE = 'subscriber_grams';

interface GramSource {
  id: number;
  email: string;
  status: string;
  first_name?: string | null;
  last_name?: string | null;
}

/**
 * Adds subscribers to the substring index under their status. Nothing is ever removed: a subscriber
 * whose name, email or status changed, or who was deleted, leaves entries that no longer hold, and
 * every candidate the index gives is confirmed against its subscribers row (docs/architecture.md).
 *
 * One row per (status, gram, block) of the subscribers written together, keyed by the smallest id in
 * it, so an import chunk of consecutive new ids writes a row per distinct gram instead of one per
 * subscriber and gram. A row whose key exists appends its set.
 */
export async function appendGramRows(trx: Knex | Knex.Transaction, organizationId: number, sources: GramSource[]) {
  if (!sources.length) return;
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
  const values: unknown[] = [];
  // In key order (status, gram, block), so InnoDB appends within each key range.
  for (const status of [...groups.keys()].sort()) {
    const rows: Array<[gram: string, block: number, offsets: number[]]> = [];
    for (const [block, scopes] of groups.get(status)!) {
      for (const scope of ['n', 'e'] as Scope[])
        for (const [gram, offsets] of scopes[scope]) rows.push([scope + gramText(gram), block, offsets]);
    }
    rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));
    for (const [gram, block, offsets] of rows)
      values.push(status, gram, block, block * BLOCK_SIZE + offsets[0], encodeOffsets(offsets));
  }
  await insertValues(
    trx,
    GRAM_TABLE,
    {
      columns: ['subscriber_status', 'gram', 'block', 'part', 'ids'],
      values,
      shared: { organization_id: organizationId },
    },
    {
      appendOnConflict: { key: ['organization_id', 'subscriber_status', 'gram', 'block', 'part'], column: 'ids' },
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
