/**
 * The substring index holds, per gram (1 to 3 characters of a folded name or email), the subscribers
 * whose text contains it, as sets of ids per block of BLOCK_SIZE consecutive ids (docs/architecture.md,
 * Substring search). A gram key is its scope letter and the gram: `nada` (a name holds "ada"), `e@ex`.
 * A row holds the sets of the grams of one bucket (a hash of the gram) and a Bloom filter of them: one
 * row per bucket instead of one per gram is what makes an import's write cheap.
 */
export const BLOCK_BITS = 12;
export const BLOCK_SIZE = 1 << BLOCK_BITS;
const WORDS_PER_BLOCK = BLOCK_SIZE / 32;
const BITMAP_MARK = 0xffff;

export type Scope = 'n' | 'e';

/** Never change: stored rows are found by it. */
export const BUCKETS = 128;

/** FNV-1a over a gram key's UTF-16 code units. */
function hashOf(gram: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < gram.length; i++) hash = Math.imul(hash ^ gram.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** The bucket of a gram key: the low 7 bits of its hash. */
export const bucketOf = (gram: string): number => hashOf(gram) % BUCKETS;

/**
 * Two bits of a 64-bit Bloom filter (as its low and high 32 bits) from hash bits above the bucket's: a
 * row's filter is the union of its grams', so a query can skip in SQL the rows that cannot hold a gram.
 */
export const bloomOf = (gram: string): [low: number, high: number] => bloomOfHash(hashOf(gram));

/** Where a gram's set is written: its bucket and its Bloom bits, from one hash. */
export function placementOf(gram: string): { bucket: number; low: number; high: number } {
  const hash = hashOf(gram);
  const [low, high] = bloomOfHash(hash);
  return { bucket: hash % BUCKETS, low, high };
}

function bloomOfHash(hash: number): [low: number, high: number] {
  let low = 0;
  let high = 0;
  for (const bit of [(hash >>> 7) & 63, (hash >>> 13) & 63]) {
    if (bit < 32) low |= 1 << bit;
    else high |= 1 << (bit - 32);
  }
  return [low >>> 0, high >>> 0];
}

/** A gram as collected: a number when all its characters are Latin-1 (no string to build or hash), else text. */
export type GramKey = number | string;

const isLatin1 = (text: string) => {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0xff) return false;
  return true;
};

/** Latin-1 grams as numbers: the size in the top bits, one byte per character. */
const gramNumber = (size: number, codes: number) => (size << 24) | codes;

export function gramText(key: GramKey): string {
  if (typeof key === 'string') return key;
  const size = key >>> 24;
  let text = '';
  for (let i = size - 1; i >= 0; i--) text += String.fromCharCode((key >>> (i * 8)) & 0xff);
  return text;
}

/**
 * Adds `offset` to the offsets of every gram of 1 to 3 characters of `text` in `into` (gram ->
 * ascending offsets), once per gram. Callers add subscribers in id order, so a gram already holding
 * this subscriber ends with its offset. This is the import's hot path: Latin-1 grams are small integers
 * (measured: 95 grams a subscriber of the benchmark cost about 19 µs as strings).
 */
export function addGrams(into: Map<GramKey, number[]>, text: string, offset: number): void {
  const chars = isLatin1(text) ? null : [...text];
  if (chars) {
    // Grams of Latin-1 characters take the same key as in a Latin-1 text.
    for (let i = 0; i < chars.length; i++)
      for (let size = 1; size <= 3 && i + size <= chars.length; size++) {
        const gram = chars.slice(i, i + size);
        addGram(
          into,
          gram.every((c) => c.length === 1 && c.charCodeAt(0) <= 0xff)
            ? gramNumber(
                size,
                gram.reduce((codes, c) => (codes << 8) | c.charCodeAt(0), 0),
              )
            : gram.join(''),
          offset,
        );
      }
    return;
  }
  let two = 0;
  let three = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    addGram(into, gramNumber(1, code), offset);
    if (i >= 1) addGram(into, gramNumber(2, ((two & 0xff) << 8) | code), offset);
    if (i >= 2) addGram(into, gramNumber(3, ((three & 0xffff) << 8) | code), offset);
    two = code;
    three = ((three & 0xff) << 8) | code;
  }
}

function addGram(into: Map<GramKey, number[]>, key: GramKey, offset: number) {
  const offsets = into.get(key);
  if (!offsets) into.set(key, [offset]);
  else if (offsets[offsets.length - 1] !== offset) offsets.push(offset);
}

/** Trigrams looked up for one term, at most this many (candidates are confirmed, so fewer only widen). */
const MAX_TERM_GRAMS = 8;

/**
 * The gram keys a term needs in one scope: the term itself when it is 1 to 3 characters long (then the
 * index answers exactly), else up to MAX_TERM_GRAMS of its trigrams spread over it, each once.
 */
export function termGrams(scope: Scope, term: string): string[] {
  const chars = [...term];
  if (chars.length <= 3) return [scope + term];
  const all = [...new Set(chars.slice(0, -2).map((_, i) => chars.slice(i, i + 3).join('')))];
  const step = Math.max(1, (all.length - 1) / (MAX_TERM_GRAMS - 1));
  const picked = new Set<string>();
  for (let i = 0; i < all.length && picked.size < MAX_TERM_GRAMS; i += step) picked.add(all[Math.round(i)]);
  picked.add(all[all.length - 1]);
  return [...picked].slice(0, MAX_TERM_GRAMS).map((g) => scope + g);
}

/**
 * Offsets (0 to BLOCK_SIZE-1, ascending) as stored, whichever is smaller: uint16 little-endian each, or a
 * bitmap of the bytes they span (a mark, the first byte's index and the byte count as uint16, the bytes).
 * A chunk of 1000 consecutive new subscribers spans about 125 bytes of its block.
 */
export function encodeOffsets(offsets: number[]): Buffer {
  const out = Buffer.allocUnsafe(offsetsSize(offsets));
  writeOffsets(out, 0, offsets);
  return out;
}

const spannedBytes = (offsets: number[]) => (offsets[offsets.length - 1] >> 3) - (offsets[0] >> 3) + 1;

function offsetsSize(offsets: number[]): number {
  return Math.min(offsets.length * 2, 6 + spannedBytes(offsets));
}

/** Writes encodeOffsets' bytes at `at`; returns where they end. */
function writeOffsets(out: Buffer, at: number, offsets: number[]): number {
  const bytes = spannedBytes(offsets);
  if (offsets.length * 2 <= 6 + bytes) {
    for (const o of offsets) at = out.writeUInt16LE(o, at);
    return at;
  }
  const first = offsets[0] >> 3;
  out.writeUInt16LE(BITMAP_MARK, at);
  out.writeUInt16LE(first, at + 2);
  out.writeUInt16LE(bytes, at + 4);
  const start = at + 6 - first;
  out.fill(0, at + 6, at + 6 + bytes);
  for (const o of offsets) out[start + (o >> 3)] |= 1 << (o & 7);
  return at + 6 + bytes;
}

/** One gram's set in a row: the gram's UTF-8 length (1 byte), the gram, the set's length (2 bytes), the set. */
export const entrySize = (gram: string, offsets: number[]): number =>
  3 + Buffer.byteLength(gram, 'utf8') + offsetsSize(offsets);

/** Writes an entry (as entrySize counts it) at `at`; returns where it ends. */
export function writeEntry(out: Buffer, at: number, gram: string, offsets: number[]): number {
  const nameEnd = at + 1 + out.write(gram, at + 1, 'utf8');
  out[at] = nameEnd - at - 1;
  const setStart = nameEnd + 2;
  const end = writeOffsets(out, setStart, offsets);
  out.writeUInt16LE(end - setStart, nameEnd);
  return end;
}

export function encodeEntry(gram: string, offsets: number[]): Buffer {
  const out = Buffer.allocUnsafe(entrySize(gram, offsets));
  writeEntry(out, 0, gram, offsets);
  return out;
}

/**
 * Calls `found` with the set of each entry of a stored row (entries one after the other) whose gram is
 * `wanted`, or of every entry when `wanted` is 'all'.
 */
export function readEntries(
  value: Uint8Array,
  wanted: Set<string> | 'all',
  found: (gram: string, set: Uint8Array) => void,
) {
  const view = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const byLength = wanted === 'all' ? null : encodedByLength(wanted);
  for (let i = 0; i < view.length;) {
    const nameEnd = i + 1 + view[i];
    const setEnd = nameEnd + 2 + view.readUInt16LE(nameEnd);
    if (!byLength) found(view.toString('utf8', i + 1, nameEnd), view.subarray(nameEnd + 2, setEnd));
    else
      for (const { gram, bytes } of byLength.get(view[i]) ?? [])
        if (sameBytes(bytes, view, i + 1)) found(gram, view.subarray(nameEnd + 2, setEnd));
    i = setEnd;
  }
}

function sameBytes(bytes: Buffer, view: Buffer, at: number) {
  for (let j = 0; j < bytes.length; j++) if (bytes[j] !== view[at + j]) return false;
  return true;
}

/**
 * The wanted grams' UTF-8 bytes by their length: a search's rows hold about 20 entries each, and
 * decoding every entry's gram to a string to look it up cost more than comparing a few bytes.
 */
const encodings = new WeakMap<Set<string>, Map<number, Array<{ gram: string; bytes: Buffer }>>>();
function encodedByLength(wanted: Set<string>) {
  let byLength = encodings.get(wanted);
  if (!byLength) {
    byLength = new Map();
    for (const gram of wanted) {
      const bytes = Buffer.from(gram, 'utf8');
      (byLength.get(bytes.length) ?? byLength.set(bytes.length, []).get(bytes.length)!).push({ gram, bytes });
    }
    encodings.set(wanted, byLength);
  }
  return byLength;
}

/** A stored value (several encoded sets one after the other, as appends leave them) into a bitmap. */
export function decodeInto(bits: Uint32Array, value: Uint8Array): void {
  const view = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  for (let i = 0; i + 1 < view.length;) {
    const o = view.readUInt16LE(i);
    i += 2;
    if (o !== BITMAP_MARK) {
      bits[o >> 5] |= 1 << (o & 31);
      continue;
    }
    const first = view.readUInt16LE(i);
    const end = i + 4 + view.readUInt16LE(i + 2);
    for (let b = first, j = i + 4; j < end; b++, j++) if (view[j]) bits[b >> 2] |= view[j] << ((b & 3) * 8);
    i = end;
  }
}

export const emptyBlock = () => new Uint32Array(WORDS_PER_BLOCK);

/** Ids of a block's set bits, ascending, appended to `out`. */
export function idsOf(block: number, bits: Uint32Array, out: number[]): void {
  const base = block * BLOCK_SIZE;
  for (let w = 0; w < WORDS_PER_BLOCK; w++) {
    let word = bits[w];
    while (word) {
      const low = word & -word;
      out.push(base + w * 32 + (31 - Math.clz32(low)));
      word ^= low;
    }
  }
}
