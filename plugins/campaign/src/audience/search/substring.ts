import type { Knex } from 'knex';
import { toInt, toText } from '@switchboard/core';
import type { SearchTexts } from './folding';
import { BLOCK_SIZE, decodeInto, emptyBlock, idsOf, Scope, termGrams } from './grams';
import { GRAM_TABLE } from './gram-rows';

/** A folded text the name (`name:`) or the name or the email (a plain word) must contain. */
export interface SubstringTerm {
  text: string;
  scope: 'name' | 'any';
}

export const termHolds = (term: SubstringTerm, texts: SearchTexts) =>
  texts.name.includes(term.text) || (term.scope === 'any' && texts.email.includes(term.text));

/** Candidates confirmed against their rows at most per search; past it the total is a lower bound. */
export const SUBSTRING_CONFIRM_CAP = 50_000;
const FIRST_WINDOW_BLOCKS = 16;
const MAX_WINDOW_BLOCKS = 256;

export interface SubstringScan {
  knex: Knex;
  organizationId: number;
  status: string;
  terms: SubstringTerm[];
  /** Other filters as the ids in [from, to) they allow, ascending (a list's members, a meta value's). */
  idFilters: Array<(from: number, to: number) => Promise<number[]>>;
  /** The candidates (ascending) that really match, read from their rows. */
  confirm(ids: number[]): Promise<number[]>;
  /** Stop once this many matches are found. */
  enough: number;
}

/**
 * The matching ids in id order, from the substring index: block by block, in windows that grow, the
 * sets of each term's grams are intersected (a term in either scope for a plain word), then with the
 * other filters' ids in the window, and the candidates confirmed. `complete` is false when the scan
 * stopped at SUBSTRING_CONFIRM_CAP before the end.
 */
export async function scanSubstrings(scan: SubstringScan): Promise<{ ids: number[]; complete: boolean }> {
  const { knex, organizationId, status, terms } = scan;
  const alternatives = terms.map((t) =>
    (t.scope === 'any' ? (['n', 'e'] as Scope[]) : (['n'] as Scope[])).map((scope) => termGrams(scope, t.text)),
  );
  const grams = [...new Set(alternatives.flat(2))];
  const spans = new Map<string, { from: number; to: number }>();
  for (const r of await knex(GRAM_TABLE)
    .where({ organization_id: organizationId, subscriber_status: status })
    .whereIn('gram', grams)
    .groupBy('gram')
    .select('gram', knex.raw('min(block) as low'), knex.raw('max(block) as high'))) {
    spans.set(toText(r.gram), { from: toInt(r.low), to: toInt(r.high) + 1 });
  }
  // Blocks where every term may hold: each term's span is the widest of its alternatives' spans.
  let from = 0;
  let to = Infinity;
  for (const alts of alternatives) {
    let low = Infinity;
    let high = -Infinity;
    for (const alt of alts) {
      const altSpans = alt.map((g) => spans.get(g));
      if (altSpans.some((s) => !s)) continue;
      low = Math.min(low, Math.max(...altSpans.map((s) => s!.from)));
      high = Math.max(high, Math.min(...altSpans.map((s) => s!.to)));
    }
    from = Math.max(from, low);
    to = Math.min(to, high);
  }
  const ids: number[] = [];
  let confirmed = 0;
  for (let size = FIRST_WINDOW_BLOCKS; from < to; from += size, size = Math.min(size * 2, MAX_WINDOW_BLOCKS)) {
    const end = Math.min(from + size, to);
    const candidates = await windowCandidates(scan, alternatives, grams, from, end);
    for (let i = 0; i < candidates.length; i += 1000) {
      if (confirmed >= SUBSTRING_CONFIRM_CAP) return { ids, complete: false };
      const batch = candidates.slice(i, i + Math.min(1000, SUBSTRING_CONFIRM_CAP - confirmed));
      confirmed += batch.length;
      ids.push(...(await scan.confirm(batch)));
      if (ids.length >= scan.enough) return { ids, complete: true };
    }
  }
  return { ids, complete: true };
}

/** The ids of blocks [from, to) that every term's grams and every other filter allow, ascending. */
async function windowCandidates(
  scan: SubstringScan,
  alternatives: string[][][],
  grams: string[],
  from: number,
  to: number,
): Promise<number[]> {
  const sets = new Map<string, Map<number, Uint32Array>>();
  const rows = await scan
    .knex(GRAM_TABLE)
    .where({ organization_id: scan.organizationId, subscriber_status: scan.status })
    .whereIn('gram', grams)
    .andWhere('block', '>=', from)
    .andWhere('block', '<', to)
    .select('gram', 'block', 'ids');
  for (const r of rows as Array<Record<string, unknown>>) {
    const gram = toText(r.gram);
    const blocks = sets.get(gram) ?? sets.set(gram, new Map()).get(gram)!;
    const block = toInt(r.block);
    const bits = blocks.get(block) ?? blocks.set(block, emptyBlock()).get(block)!;
    decodeInto(bits, r.ids as Uint8Array);
  }
  const filters = await Promise.all(scan.idFilters.map((allowed) => allowed(from * BLOCK_SIZE, to * BLOCK_SIZE)));
  const out: number[] = [];
  for (let block = from; block < to; block++) {
    const result = emptyBlock().fill(0xffffffff);
    for (const alts of alternatives) {
      const term = emptyBlock();
      for (const alt of alts) {
        const both = emptyBlock().fill(0xffffffff);
        for (const gram of alt) {
          const bits = sets.get(gram)?.get(block);
          if (!bits) both.fill(0);
          else for (let w = 0; w < both.length; w++) both[w] &= bits[w];
        }
        for (let w = 0; w < term.length; w++) term[w] |= both[w];
      }
      for (let w = 0; w < result.length; w++) result[w] &= term[w];
    }
    idsOf(block, result, out);
  }
  if (!filters.length) return out;
  const allowedSets = filters.map((f) => new Set(f));
  return out.filter((id) => allowedSets.every((s) => s.has(id)));
}
