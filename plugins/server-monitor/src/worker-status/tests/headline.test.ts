import { expect } from 'chai';
import { headlineOf } from '../headline';
import type { OnCall } from '../on-call';

const onCall = (counts: Array<Partial<Record<'up' | 'down' | 'paused' | 'pending', number>>>, troubles = {}) =>
  ({
    counts: counts.map((c, i) => ({ plan: `plan-${i}`, up: 0, down: 0, paused: 0, pending: 0, ...c })),
    down: { total: 0, servers: [] },
    heartbeats: { total: 0, missing: [] },
    certificates: { total: 0, expiring: [] },
    unheard: { total: 0, alerts: [] },
    ...troubles,
  }) as OnCall;

describe('server-monitor: the dashboard headline', () => {
  it('says all are up only when every server has been checked and answered', () => {
    expect(headlineOf(onCall([{ up: 1 }]))).to.equal('All 1 server up');
    expect(headlineOf(onCall([{ up: 2 }, { up: 1 }]))).to.equal('All 3 servers up');
  });

  it('counts servers not checked yet and paused ones apart', () => {
    expect(headlineOf(onCall([{ pending: 1 }]))).to.equal('1 server not checked yet');
    expect(headlineOf(onCall([{ pending: 2, paused: 1 }]))).to.equal('2 servers not checked yet, 1 paused');
    expect(headlineOf(onCall([{ up: 2, pending: 1 }, { paused: 2 }]))).to.equal(
      '2 servers up, 1 not checked yet, 2 paused',
    );
    expect(headlineOf(onCall([{ up: 1, paused: 1 }]))).to.equal('1 server up, 1 paused');
    expect(headlineOf(onCall([]))).to.equal('No servers yet');
  });

  it('puts what is down first, then anything else that needs a look', () => {
    expect(headlineOf(onCall([{ up: 3, down: 2 }], { down: { total: 2, servers: [] } }))).to.equal('2 servers down');
    expect(headlineOf(onCall([{ up: 3 }], { unheard: { total: 1, alerts: [] } }))).to.equal('Attention needed');
    expect(headlineOf(onCall([{ up: 3 }], { heartbeats: { total: 1, missing: [] } }))).to.equal('Attention needed');
  });
});
