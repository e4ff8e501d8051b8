import { expect } from 'chai';
import { rowMapper } from '../src';

const thingSchema = {
  type: 'object',
  required: ['id', 'name', 'note', 'kind', 'active', 'owner_id', 'created_at', 'seen_at', 'score'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    note: { type: ['string', 'null'] },
    kind: { enum: ['a', 'b'] },
    active: { type: 'boolean' },
    owner_id: { type: ['integer', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    seen_at: { type: ['string', 'null'], format: 'date-time' },
    score: { type: 'number' },
  },
} as const;

describe('rowMapper: a row read as its response schema describes it', () => {
  const toThing = rowMapper(thingSchema, { score: (row) => Number(row.points) * 2 });

  it('reads the values of both drivers alike', () => {
    const sqlite = {
      id: 7,
      name: 'x',
      note: null,
      kind: 'a',
      active: 1,
      owner_id: null,
      created_at: 1767225600000,
      seen_at: null,
      points: 2,
    };
    const mysql = {
      id: '7',
      name: 'x',
      note: null,
      kind: 'a',
      active: 1,
      owner_id: null,
      created_at: new Date('2026-01-01T00:00:00Z'),
      seen_at: null,
      points: '2',
    };
    const expected = {
      id: 7,
      name: 'x',
      note: null,
      kind: 'a',
      active: true,
      owner_id: null,
      created_at: '2026-01-01T00:00:00.000Z',
      seen_at: null,
      score: 4,
    };
    expect(toThing(sqlite)).to.deep.equal(expected);
    expect(toThing(mysql)).to.deep.equal(expected);
    expect(toThing({ ...sqlite, owner_id: 3n, seen_at: 1767225600000, active: 0 })).to.include({
      owner_id: 3,
      seen_at: '2026-01-01T00:00:00.000Z',
      active: false,
    });
  });

  it('refuses a value its schema does not allow, rather than sending it', () => {
    expect(() => toThing({ id: 1, name: 'x', kind: 'c', created_at: 1 })).to.throw('Not one of a, b: c');
    expect(() => toThing({ id: 1, name: 'x', kind: 'a', created_at: null })).to.throw('Missing timestamp');
    expect(() => toThing({ id: 'seven', name: 'x', kind: 'a', created_at: 1 })).to.throw('Not an integer value');
  });

  it('selects the columns of every field that is not computed', () => {
    expect(toThing.columns).to.deep.equal([
      'id',
      'name',
      'note',
      'kind',
      'active',
      'owner_id',
      'created_at',
      'seen_at',
    ]);
  });

  it('names a field it cannot read from a column', () => {
    expect(() => rowMapper({ properties: { tags: { type: 'array' } } })).to.throw('no column reader for field "tags"');
  });
});
