import type { Knex } from 'knex';
import { insertValues } from '@switchboard/core';
import { searchTexts } from './folding';
import { BLOCK_BITS, BLOCK_SIZE, encodeOffsets, subscriberGrams } from './grams';

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
  const sets = new Map<string, number[]>();
  for (const s of [...sources].sort((a, b) => a.id - b.id)) {
    const block = s.id >> BLOCK_BITS;
    const offset = s.id & (BLOCK_SIZE - 1);
    for (const gram of subscriberGrams(searchTexts(s))) {
      const key = `${s.status}\u0000${gram}\u0000${String(block).padStart(10, '0')}`;
      const offsets = sets.get(key);
      if (offsets) offsets.push(offset);
      else sets.set(key, [offset]);
    }
  }
  const values: unknown[] = [];
  // In key order, so InnoDB appends within each key range.
  for (const key of [...sets.keys()].sort()) {
    const [status, gram, block] = key.split('\u0000');
    const offsets = sets.get(key)!;
    const first = Number(block) * BLOCK_SIZE + offsets[0];
    values.push(status, gram, Number(block), first, encodeOffsets(offsets));
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
