import { expect } from 'chai';
import { TimelineCounts } from '../timelines';

/** The periods a TimelineCounts holds, as `period start` strings. */
const periodsOf = (counts: TimelineCounts) =>
  [...(counts as unknown as { counts: Map<string, { period: string; period_start: Date }> }).counts.values()].map(
    (row) => `${row.period} ${row.period_start.toISOString()}`,
  );

describe('campaign: message timelines', () => {
  it('puts an event in the hour and day it happened, before 1970 too', () => {
    const counts = new TimelineCounts();
    counts.add(1, 'delivered', new Date('1969-12-31T23:30:00Z'));
    counts.add(2, 'delivered', new Date('2026-11-27T10:45:00Z'));
    expect(periodsOf(counts)).to.deep.equal([
      'h 1969-12-31T23:00:00.000Z',
      'd 1969-12-31T00:00:00.000Z',
      'h 2026-11-27T10:00:00.000Z',
      'd 2026-11-27T00:00:00.000Z',
    ]);
  });
});
