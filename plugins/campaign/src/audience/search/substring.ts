import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Knex } from 'knex';
import { toInt } from '@switchboard/core';
import type { SearchTexts } from './folding';
import { BLOCK_SIZE, bloomOf, bucketOf, decodeInto, emptyBlock, idsOf, readEntries, Scope, termGrams } from './grams';
import { GRAM_TABLE, MEMBERSHIP_STATUS, membershipGram } from './gram-rows';

/** A folded text the name (`name:`) or the name or the email (a plain word) must contain. */
export interface SubstringTerm {
  text: string;
  scope: 'name' | 'any';
  /** A `word*` prefix: the text must start a word (docs/decisions.md, Search). */
  wordStart: boolean;
}

const ENDS_IN_WORD = /[\p{L}\p{N}]$/u;

/** Whether a word starts at `i`: nothing of a word (letter or digit) just before it. */
const wordStartsAt = (text: string, i: number) => i === 0 || !ENDS_IN_WORD.test(text.slice(Math.max(0, i - 2), i));

/**
 * Whether `term` starts a word of an email: its local part, a piece of the local part (ada.lovelace:
 * ada, lovelace) or its domain.
 */
const emailWordStartsAt = (email: string, i: number) => {
  const at = email.lastIndexOf('@');
  return i === at + 1 || (i < at && wordStartsAt(email, i));
};

function occursWhere(text: string, term: string, holds: (text: string, i: number) => boolean): boolean {
  for (let i = text.indexOf(term); i >= 0; i = text.indexOf(term, i + 1)) if (holds(text, i)) return true;
  return false;
}

export function termHolds(term: SubstringTerm, texts: SearchTexts): boolean {
  if (!term.wordStart)
    return texts.name.includes(term.text) || (term.scope === 'any' && texts.email.includes(term.text));
  return (
    occursWhere(texts.name, term.text, wordStartsAt) ||
    (term.scope === 'any' && occursWhere(texts.email, term.text, emailWordStartsAt))
  );
}

/** The lowest and highest id a filter allows, or null when it allows none. */
export type IdSpan = { low: number; high: number } | null;

/** A filter on ids that can be read as an id range or checked for given ids. */
export interface IdFilter {
  /** Its lowest and highest id: the walk covers no block outside them. */
  span(): Promise<IdSpan>;
  /** The ids in [from, to) it allows. */
  inRange(from: number, to: number): Promise<number[]>;
  /** Those of `ids` it allows. */
  among(ids: number[]): Promise<number[]>;
}

/**
 * Checking one candidate costs about this many ids read in a range. Measured on MariaDB at a million
 * subscribers: a list's members read 0.5 to 1 µs an id, 1000 candidates checked 10 to 15 ms.
 */
const POINT_COST = 10;

/**
 * Candidates confirmed against their rows at most per search; past it the total is a lower bound. One
 * costs 7 to 10 µs on MariaDB at a million subscribers, so this bounds a search's confirming to about
 * 50 ms (docs/performance-history.md, issue 27).
 */
export const SUBSTRING_CONFIRM_CAP = 5_000;
/** Index rows decoded in one turn of the event loop. */
const ROWS_PER_TURN = 500;
const FIRST_WINDOW_BLOCKS = 4;
/**
 * The lead grams' ids one window builds at most: decoding and intersecting them runs on the event loop
 * (a window over every block of a gram in every address held it for over 100 ms at a million).
 */
const WINDOW_IDS = 65_536;

interface ScanProgress {
  blocksRead: number;
  /** The candidates the windows so far left, and how many of them were confirmed. */
  candidates: number;
  confirmed: number;
  /** The lead grams' ids per block in the last window (the lead may change from one window to the next). */
  leadPerBlock: number;
  /** Bytes of index rows read so far. */
  bytesRead: number;
}

/**
 * The next window: as many blocks as should bring the matches still missing at the rate found so far,
 * half again for safety; all the rest when nothing matched yet (a rare term needs one more read, not ten).
 * Never more blocks than hold WINDOW_IDS lead ids, nor candidates than are left to confirm, nor index
 * bytes than are left of the search's read budget, at the rates read so far; 0 when that budget is spent.
 */
function nextWindow(
  p: ScanProgress,
  found: number,
  { enough, readBudgetBytes }: Pick<SubstringScan, 'enough' | 'readBudgetBytes'>,
): number {
  const perBlock = (n: number) => n / p.blocksRead;
  const byMatches = found
    ? Math.max(FIRST_WINDOW_BLOCKS, Math.ceil(((enough - found) / perBlock(found)) * 1.5))
    : Infinity;
  const byIds = p.leadPerBlock ? Math.ceil(WINDOW_IDS / p.leadPerBlock) : Infinity;
  const byConfirms = p.candidates
    ? Math.ceil((SUBSTRING_CONFIRM_CAP - p.confirmed) / perBlock(p.candidates))
    : Infinity;
  const byBytes = Math.floor((readBudgetBytes - p.bytesRead) / perBlock(p.bytesRead));
  if (byBytes < 1) return 0;
  return Math.max(1, Math.min(byMatches, byIds, byConfirms, byBytes));
}

export interface SubstringScan {
  knex: Knex;
  organizationId: number;
  status: string;
  terms: SubstringTerm[];
  /**
   * The lists the matches are members of: the index narrows the candidates to their sets, which keep
   * removed memberships; `confirm` checks them.
   */
  listIds: number[];
  /** The other filters (a meta value's subscribers). */
  idFilters: IdFilter[];
  /** The candidates (ascending) that really match, read from their rows. */
  confirm(ids: number[]): Promise<number[]>;
  /** Stop once this many matches are found. */
  enough: number;
  /** Bytes of index rows to read at most (SearchOptions.readBudgetBytes). */
  readBudgetBytes: number;
}

/**
 * The matching ids in id order, from the substring index: block by block, in windows sized by the rate
 * of matches (nextWindow), the sets of each term's grams are intersected (a term in either scope for a plain word), then with the
 * other filters' ids in the window, and the candidates confirmed. `complete` is false when the scan
 * stopped at SUBSTRING_CONFIRM_CAP or its read budget before the end.
 */
export async function scanSubstrings(scan: SubstringScan): Promise<{ ids: number[]; complete: boolean }> {
  const { knex, organizationId, status, terms } = scan;
  const alternatives = terms.map((t) =>
    (t.scope === 'any' ? (['n', 'e'] as Scope[]) : (['n'] as Scope[])).map((scope) => termGrams(scope, t.text)),
  );
  // Before anything is read the longest term is likely the rarest.
  const longest = terms.indexOf([...terms].sort((x, y) => y.text.length - x.text.length)[0]);
  // Every subscriber of the status is in the blocks of the lowest to the highest id it has now (the index
  // may hold others, whose entries no longer hold), and so is every match within each filter's span: a
  // meta value nobody has ends the search here, a small list's members are all the walk covers.
  const spans = await Promise.all([
    spanOf(knex('subscribers').where({ organization_id: organizationId, status }), 'id'),
    ...scan.listIds.map((listId) =>
      spanOf(knex('list_subscribers').where({ list_id: listId, subscriber_status: status }), 'subscriber_id'),
    ),
    ...scan.idFilters.map((filter) => filter.span()),
  ]);
  const span = spans.reduce((all, one) =>
    all && one && Math.max(all.low, one.low) <= Math.min(all.high, one.high)
      ? { low: Math.max(all.low, one.low), high: Math.min(all.high, one.high) }
      : null,
  );
  if (!span) return { ids: [], complete: true };
  let from = Math.floor(span.low / BLOCK_SIZE);
  const to = Math.floor(span.high / BLOCK_SIZE) + 1;
  const listGrams = scan.listIds.map(membershipGram);
  const density: GramDensity = new Map();
  const ids: number[] = [];
  const progress: ScanProgress = {
    blocksRead: 0,
    candidates: 0,
    confirmed: 0,
    leadPerBlock: 0,
    bytesRead: 0,
  };
  for (let size = FIRST_WINDOW_BLOCKS; from < to; size = nextWindow(progress, ids.length, scan)) {
    if (!size) return { ids, complete: false };
    const end = Math.min(from + size, to);
    const index = gramIndex(alternatives, rarestTerm(alternatives, density) ?? longest, listGrams, density);
    const { candidates, leading, bytes } = await windowCandidates(scan, alternatives, index, from, end);
    progress.bytesRead += bytes;
    progress.blocksRead += end - from;
    progress.leadPerBlock = leading / (end - from);
    progress.candidates += candidates.length;
    from = end;
    for (let i = 0; i < candidates.length;) {
      if (progress.confirmed >= SUBSTRING_CONFIRM_CAP) return { ids, complete: false };
      // As many as may still be needed (most candidates match), at least 100, at most 1000.
      const batchSize = Math.min(
        1000,
        Math.max(100, scan.enough - ids.length),
        SUBSTRING_CONFIRM_CAP - progress.confirmed,
      );
      const batch = candidates.slice(i, i + batchSize);
      i += batch.length;
      progress.confirmed += batch.length;
      ids.push(...(await scan.confirm(batch)));
      if (ids.length >= scan.enough) return { ids, complete: true };
    }
  }
  return { ids, complete: true };
}

/** The lowest and highest `column` of a query's rows: two ends of an index range. */
export async function spanOf(query: Knex.QueryBuilder, column: string): Promise<IdSpan> {
  const [row] = (await query.min({ low: column }).max({ high: column })) as Array<Record<string, unknown>>;
  if (row?.low === null || row?.low === undefined) return null;
  return { low: toInt(row.low), high: toInt(row.high) };
}

/** Per gram, the bytes of its sets and the blocks read so far: how common it is in this audience. */
type GramDensity = Map<string, { bytes: number; blocks: number }>;

interface GramIndex {
  /** Every gram key the scan reads, membership keys included. */
  grams: Set<string>;
  leadTerm: number;
  /** The leading term's grams in each of its scopes, its lead gram first. */
  lead: string[][];
  leadGrams: string[];
  otherGrams: string[];
  listGrams: string[];
  density: GramDensity;
}

const rateOf = (density: GramDensity, gram: string) => {
  const seen = density.get(gram);
  return seen?.blocks ? seen.bytes / seen.blocks : undefined;
};

/**
 * The term (other than `except`) whose grams the windows read so far found least of: a term of several
 * scopes adds them up, one of several grams counts its rarest. Undefined while a term is unread.
 */
function rarestTerm(alternatives: string[][][], density: GramDensity, except?: number): number | undefined {
  let rarest: number | undefined;
  let lowest = Infinity;
  alternatives.forEach((alts, term) => {
    if (term === except) return;
    let estimate = 0;
    for (const alt of alts) {
      const rates = alt.map((gram) => rateOf(density, gram));
      if (rates.some((r) => r === undefined)) return;
      estimate += Math.min(...(rates as number[]));
    }
    if (estimate < lowest) [rarest, lowest] = [term, estimate];
  });
  return rarest;
}

/**
 * The grams of a window with `leadTerm` leading: its first gram in each scope says which blocks to read
 * at all (one term of 16 that matches nobody then ends the scan after one read). Within a term the order
 * stays: the first window's blocks are too few to tell which of a term's grams is rarer in the audience
 * (the first 16,384 ids hold "r12" of user12345 more often than "234", which is in every block).
 */
function gramIndex(alternatives: string[][][], leadTerm: number, listGrams: string[], density: GramDensity): GramIndex {
  const lead = alternatives[leadTerm];
  const leadGrams = [...new Set(lead.map((alt) => alt[0]))];
  const grams = new Set(alternatives.flat(2));
  return {
    grams: new Set([...grams, ...listGrams]),
    leadTerm,
    lead,
    leadGrams,
    otherGrams: [...grams].filter((g) => !leadGrams.includes(g)),
    listGrams,
    density,
  };
}

/** Rows that may hold one of the grams: their bucket, and every bit of a gram's Bloom filter set. */
function mayHold(query: Knex.QueryBuilder, grams: string[]): Knex.QueryBuilder {
  return query.andWhere((any) => {
    for (const gram of grams) {
      const [low, high] = bloomOf(gram);
      any.orWhereRaw('(bucket = ? and (bloom_low & ?) = ? and (bloom_high & ?) = ?)', [
        bucketOf(gram),
        low,
        low,
        high,
        high,
      ]);
    }
  });
}

/** Candidates of a window as a bitmap per block (blocks without any left out): cheap to intersect. */
type Bitmaps = Map<number, Uint32Array>;

function countOf(bitmaps: Bitmaps): number {
  let count = 0;
  for (const bits of bitmaps.values()) for (let w = 0; w < bits.length; w++) count += popCount(bits[w]);
  return count;
}

function popCount(word: number): number {
  word -= (word >>> 1) & 0x55555555;
  word = (word & 0x33333333) + ((word >>> 2) & 0x33333333);
  return (Math.imul((word + (word >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** Keeps in each block only the bits `allowed` gives it (none when it gives none); drops emptied blocks. */
function narrow(bitmaps: Bitmaps, allowed: (block: number) => Uint32Array | undefined) {
  for (const [block, bits] of bitmaps) {
    const keep = allowed(block);
    let any = 0;
    for (let w = 0; w < bits.length; w++) any |= bits[w] &= keep ? keep[w] : 0;
    if (!any) bitmaps.delete(block);
  }
}

const idsOfBitmaps = (bitmaps: Bitmaps) => {
  const ids: number[] = [];
  for (const block of [...bitmaps.keys()].sort((x, y) => x - y)) idsOf(block, bitmaps.get(block)!, ids);
  return ids;
};

/**
 * The ids of blocks [from, to) that every term's grams and every other filter allow, ascending. The
 * lead grams' rows are read first, then the other filters narrow their ids, then the rarest other term's
 * rows (by what earlier windows read), and the other grams' rows are read only for the blocks still
 * holding candidates: one term that matches nobody (`y*` among 16 common one-letter prefixes) ends the
 * window after two reads instead of reading every term's rows. Candidates stay bitmaps until the end: a
 * window holds up to WINDOW_IDS of them, and arrays of those held the event loop (issue 27).
 */
async function windowCandidates(
  scan: SubstringScan,
  alternatives: string[][][],
  index: GramIndex,
  from: number,
  to: number,
): Promise<{ candidates: number[]; leading: number; bytes: number }> {
  const sets = new Map<string, Map<number, Uint32Array>>();
  let bytes = 0;
  const read = async (
    status: string,
    grams: string[],
    blockCount: number,
    blocks: (q: Knex.QueryBuilder) => Knex.QueryBuilder,
  ) => {
    const rows = await blocks(
      mayHold(
        scan
          .knex(GRAM_TABLE)
          .where({ organization_id: scan.organizationId, subscriber_status: status })
          .whereIn('bucket', [...new Set(grams.map(bucketOf))]),
        grams,
      ),
    ).select('block', 'grams');
    const asked = new Set(grams);
    for (const [i, r] of (rows as Array<Record<string, unknown>>).entries()) {
      // Other requests (and /health) in between: a read of thousands of part rows decodes for tens of ms.
      if (i % ROWS_PER_TURN === ROWS_PER_TURN - 1) await nextTurn();
      const block = toInt(r.block);
      bytes += (r.grams as Uint8Array).length;
      readEntries(r.grams as Uint8Array, index.grams, (gram, set) => {
        const blocks = sets.get(gram) ?? sets.set(gram, new Map()).get(gram)!;
        decodeInto(blocks.get(block) ?? blocks.set(block, emptyBlock()).get(block)!, set);
        if (asked.has(gram)) densityOf(gram).bytes += set.length;
      });
    }
    for (const gram of grams) densityOf(gram).blocks += blockCount;
  };
  const densityOf = (gram: string) =>
    index.density.get(gram) ?? index.density.set(gram, { bytes: 0, blocks: 0 }).get(gram)!;
  /** The bits of a block in which a term holds (in any of its scopes: every gram of that scope). */
  const termBits = (alts: string[][], block: number) => {
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
    return term;
  };
  const blocksOf = (bitmaps: Bitmaps) => [...bitmaps.keys()].sort((x, y) => x - y);
  await read(scan.status, index.leadGrams, to - from, (q) =>
    q.andWhere('block', '>=', from).andWhere('block', '<', to),
  );
  const candidates: Bitmaps = new Map();
  for (const gram of index.leadGrams)
    for (const [block, bits] of sets.get(gram) ?? []) {
      const any = candidates.get(block) ?? candidates.set(block, emptyBlock()).get(block)!;
      for (let w = 0; w < any.length; w++) any[w] |= bits[w];
    }
  const leading = countOf(candidates);
  const answer = () => ({ candidates: idsOfBitmaps(candidates), leading, bytes });
  // The lists' sets, then the other filters, before the other grams: a list or a meta value that
  // rules a block out spares reading that block's rows of every other gram.
  if (index.listGrams.length && candidates.size) {
    const blocks = blocksOf(candidates);
    await read(MEMBERSHIP_STATUS, index.listGrams, blocks.length, (q) => q.whereIn('block', blocks));
    narrow(candidates, (block) => termBits([index.listGrams], block));
  }
  for (const filter of scan.idFilters) {
    if (!candidates.size) break;
    // Read the filter's ids in the window, or check the candidates, whichever reads less.
    const allowed: Bitmaps = new Map();
    const allow = (id: number) => {
      const block = Math.floor(id / BLOCK_SIZE);
      const bits = allowed.get(block) ?? allowed.set(block, emptyBlock()).get(block)!;
      const offset = id & (BLOCK_SIZE - 1);
      bits[offset >> 5] |= 1 << (offset & 31);
    };
    if (countOf(candidates) * POINT_COST > (to - from) * BLOCK_SIZE) {
      for (const id of await filter.inRange(from * BLOCK_SIZE, to * BLOCK_SIZE)) allow(id);
    } else {
      const ids = idsOfBitmaps(candidates);
      for (let i = 0; i < ids.length; i += 1000) for (const id of await filter.among(ids.slice(i, i + 1000))) allow(id);
    }
    narrow(candidates, (block) => allowed.get(block));
  }
  if (!candidates.size || !index.otherGrams.length) return answer();
  const readFirst = new Set<string>();
  const rarest = rarestTerm(alternatives, index.density, index.leadTerm);
  if (rarest !== undefined) {
    for (const gram of alternatives[rarest].flat()) if (!index.leadGrams.includes(gram)) readFirst.add(gram);
    const blocks = blocksOf(candidates);
    await read(scan.status, [...readFirst], blocks.length, (q) => q.whereIn('block', blocks));
    narrow(candidates, (block) => termBits(alternatives[rarest], block));
    if (!candidates.size) return answer();
  }
  const active = blocksOf(candidates);
  // The leading term's other grams in a scope matter only in the blocks where that scope's lead gram holds
  // a candidate (a plain word of digits has none in names); the other terms' grams in every such block.
  const wanted = new Map<string, Set<number>>();
  const want = (gram: string, blocks: number[]) => {
    const into = wanted.get(gram) ?? wanted.set(gram, new Set()).get(gram)!;
    for (const block of blocks) into.add(block);
  };
  const leadTermGrams = new Set(index.lead.flat());
  for (const alt of index.lead) {
    const blocks = active.filter((block) => sets.get(alt[0])?.has(block));
    for (const gram of alt.slice(1)) want(gram, blocks);
  }
  for (const gram of index.otherGrams) if (!leadTermGrams.has(gram)) want(gram, active);
  // One read per set of blocks: usually one, or one per scope of a plain word.
  const reads = new Map<string, { blocks: number[]; grams: string[] }>();
  for (const [gram, blocks] of wanted) {
    if (!blocks.size || readFirst.has(gram)) continue;
    const list = [...blocks].sort((x, y) => x - y);
    const key = list.join(',');
    (reads.get(key) ?? reads.set(key, { blocks: list, grams: [] }).get(key)!).grams.push(gram);
  }
  await Promise.all(
    [...reads.values()].map(({ blocks, grams }) =>
      read(scan.status, grams, blocks.length, (q) => q.whereIn('block', blocks)),
    ),
  );
  for (const alts of alternatives) narrow(candidates, (block) => termBits(alts, block));
  return answer();
}
