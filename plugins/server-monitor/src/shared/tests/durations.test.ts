import { expect } from 'chai';
import { durationSince } from '../durations';

describe('server-monitor: how long an outage lasted, for a person', () => {
  it('says seconds under a minute, then minutes, hours and days', () => {
    const now = new Date('2026-06-01T12:00:00Z');
    const ago = (ms: number) => new Date(now.getTime() - ms);
    expect(durationSince(ago(58_000), now)).to.equal('58 s');
    expect(durationSince(ago(-5_000), now)).to.equal('0 s');
    expect(durationSince(ago(60_000), now)).to.equal('1 min');
    expect(durationSince(ago(125 * 60_000), now)).to.equal('2 h 5 min');
    expect(durationSince(ago((3 * 24 + 4) * 3_600_000), now)).to.equal('3 d 4 h');
  });
});
