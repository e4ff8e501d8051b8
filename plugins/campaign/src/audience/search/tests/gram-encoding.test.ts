import { expect } from 'chai';
import {
  addGrams,
  BLOCK_SIZE,
  decodeInto,
  emptyBlock,
  encodeEntry,
  encodeOffsets,
  gramText,
  idsOf,
  readEntries,
} from '../grams';

/** A deterministic pseudo-random sorted set of offsets in a block. */
function offsets(seed: number, density: number, from = 0, to = BLOCK_SIZE): number[] {
  const out: number[] = [];
  let x = seed;
  for (let o = from; o < to; o++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    if (x / 2 ** 32 < density) out.push(o);
  }
  return out.length ? out : [from];
}

const decoded = (block: number, ...values: Buffer[]) => {
  const bits = emptyBlock();
  for (const v of values) decodeInto(bits, v);
  const ids: number[] = [];
  idsOf(block, bits, ids);
  return ids;
};

describe('campaign: substring index encoding', () => {
  it('stores sparse and dense sets (offsets or a spanned bitmap) and reads them back exactly', () => {
    for (const [seed, density, from, to] of [
      [1, 0.001, 0, BLOCK_SIZE],
      [2, 0.05, 0, BLOCK_SIZE],
      [3, 0.9, 100, 1100],
      [4, 1, 3000, 4000],
      [5, 0.5, 0, BLOCK_SIZE],
      [6, 1, BLOCK_SIZE - 1, BLOCK_SIZE],
    ]) {
      const set = offsets(seed, density, from, to);
      const value = encodeOffsets(set);
      expect(decoded(7, value)).to.deep.equal(set.map((o) => 7 * BLOCK_SIZE + o));
      if (set.length > 200) expect(value.length).to.be.below(set.length * 2);
    }
  });

  it('reads appended values as the union of their sets, and only the wanted grams of a row', () => {
    const a = offsets(8, 0.3, 0, 1000);
    const b = offsets(9, 0.01, 500, 3000);
    const union = [...new Set([...a, ...b])].sort((x, y) => x - y);
    expect(decoded(0, Buffer.concat([encodeOffsets(a), encodeOffsets(b)]))).to.deep.equal(union);

    const row = Buffer.concat([encodeEntry('nada', a), encodeEntry('eü@', b), encodeEntry('nada', b)]);
    const seen: Record<string, Buffer[]> = {};
    readEntries(row, new Set(['nada', 'eü@']), (gram, set) => (seen[gram] ??= []).push(Buffer.from(set)));
    expect(Object.keys(seen).sort()).to.deep.equal(['eü@', 'nada']);
    expect(decoded(0, ...seen.nada)).to.deep.equal(union);
    expect(decoded(0, ...seen['eü@'])).to.deep.equal(b);
  });

  it('collects every gram of 1 to 3 characters once per subscriber, Latin-1 or not', () => {
    const grams = new Map<number | string, number[]>();
    addGrams(grams, 'aaa', 1);
    addGrams(grams, 'añ😀', 2);
    const byText = Object.fromEntries([...grams].map(([key, ids]) => [gramText(key), ids]));
    expect(byText).to.deep.equal({
      a: [1, 2],
      aa: [1],
      aaa: [1],
      añ: [2],
      'añ😀': [2],
      ñ: [2],
      'ñ😀': [2],
      '😀': [2],
    });
  });
});
