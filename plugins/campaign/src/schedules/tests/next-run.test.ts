import { expect } from 'chai';
import { nextRunAt } from '../next-run';
import { isIanaZone } from '../zones';

describe('campaign: next run of a schedule', () => {
  const weekly = (day: number, time: string, timezone: string) => ({
    frequency: 'weekly' as const,
    day_of_week: day,
    send_time: time,
    timezone,
  });

  it('finds the next weekday and time in the zone, in UTC', () => {
    // 2026-03-04 is a Wednesday. Monday 09:00 Berlin (UTC+1 in winter) is 08:00 UTC.
    expect(nextRunAt(weekly(1, '09:00', 'Europe/Berlin'), new Date('2026-03-04T10:00:00Z')).toISOString()).to.equal(
      '2026-03-09T08:00:00.000Z',
    );
    // Same day, later time: today.
    expect(nextRunAt(weekly(3, '18:30', 'Europe/Berlin'), new Date('2026-03-04T10:00:00Z')).toISOString()).to.equal(
      '2026-03-04T17:30:00.000Z',
    );
    // Same day, time passed: a week later.
    expect(nextRunAt(weekly(3, '09:00', 'Europe/Berlin'), new Date('2026-03-04T10:00:00Z')).toISOString()).to.equal(
      '2026-03-11T08:00:00.000Z',
    );
  });

  it('keeps the wall-clock time across DST changes', () => {
    // Berlin moves to summer time on Sunday 2026-03-29: Monday 09:00 is then 07:00 UTC.
    expect(nextRunAt(weekly(1, '09:00', 'Europe/Berlin'), new Date('2026-03-25T00:00:00Z')).toISOString()).to.equal(
      '2026-03-30T07:00:00.000Z',
    );
    // New York moves back on 2026-11-01: Monday 09:00 is then 14:00 UTC (was 13:00).
    expect(nextRunAt(weekly(1, '09:00', 'America/New_York'), new Date('2026-10-27T00:00:00Z')).toISOString()).to.equal(
      '2026-11-02T14:00:00.000Z',
    );
    // 02:30 does not exist in Berlin on 2026-03-29: it moves forward to 03:30 local (01:30 UTC).
    expect(nextRunAt(weekly(0, '02:30', 'Europe/Berlin'), new Date('2026-03-28T00:00:00Z')).toISOString()).to.equal(
      '2026-03-29T01:30:00.000Z',
    );
  });

  it('runs once a day across a spring-forward gap that ends at midnight, and takes the first of a repeated hour', () => {
    const daily = (time: string, timezone: string) => ({ frequency: 'daily' as const, send_time: time, timezone });
    // America/Nuuk skips from 23:00 on Saturday 2026-03-28 to 00:00 on Sunday (-02:00 to -01:00).
    const runs: string[] = [];
    for (let at = new Date('2026-03-26T12:00:00Z'), i = 0; i < 4; i++)
      runs.push((at = nextRunAt(daily('23:00', 'America/Nuuk'), at)).toISOString());
    expect(runs).to.deep.equal([
      '2026-03-27T01:00:00.000Z', // Thursday 23:00 -02:00
      '2026-03-28T01:00:00.000Z', // Friday 23:00
      '2026-03-29T01:00:00.000Z', // Saturday's, moved forward by the gap: Sunday 00:00 -01:00 (it skipped to Sunday night)
      '2026-03-30T00:00:00.000Z', // Sunday 23:00 -01:00
    ]);
    // Saturday 23:30, a week ahead: that day's time moved forward by the gap (it threw "no next run", a 500).
    expect(nextRunAt(weekly(6, '23:30', 'America/Nuuk'), new Date('2026-03-22T01:40:00Z')).toISOString()).to.equal(
      '2026-03-29T01:30:00.000Z',
    );
    // Havana repeats 00:00-00:59 on 2025-11-02: 00:30 is the first occurrence (-04:00) whenever it is computed.
    for (const after of ['2025-11-01T19:00:00Z', '2025-11-01T04:30:01Z'])
      expect(nextRunAt(daily('00:30', 'America/Havana'), new Date(after)).toISOString(), after).to.equal(
        '2025-11-02T04:30:00.000Z',
      );
  });

  it('runs daily schedules every day', () => {
    expect(
      nextRunAt(
        { frequency: 'daily', send_time: '06:00', timezone: 'Asia/Tokyo' },
        new Date('2026-03-04T00:00:00Z'),
      ).toISOString(),
    ).to.equal('2026-03-04T21:00:00.000Z');
  });

  it('accepts IANA Region/City names only', () => {
    expect(isIanaZone('Europe/Berlin')).to.equal(true);
    expect(isIanaZone('America/Argentina/Buenos_Aires')).to.equal(true);
    expect(isIanaZone('Mars/Olympus')).to.equal(false);
    expect(isIanaZone('UTC')).to.equal(false);
    expect(isIanaZone('+02:00')).to.equal(false);
  });
});
