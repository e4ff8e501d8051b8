import { expect } from 'chai';
import { recordingLogger } from '../src/testing';
import { RepeatedWarning } from '../src/repeated-warning';
import { asAppError } from '../src/http/error-handler';

const unreachable = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED', fatal: true });

describe('a warning every request meets is written once per interval', () => {
  it('writes the first, leaves out the rest of the interval, and the next line counts them', () => {
    let now = 0;
    const warning = new RepeatedWarning(10_000, () => now);
    const { logger, entries } = recordingLogger('warn');
    for (; now < 25_000; now += 1) asAppError(unreachable(), logger, warning);
    expect(entries.map((e) => [e.msg, e.left_out])).to.deep.equal([
      ['database unavailable: connect ECONNREFUSED 127.0.0.1:3306', undefined],
      ['database unavailable: connect ECONNREFUSED 127.0.0.1:3306', 9_999],
      ['database unavailable: connect ECONNREFUSED 127.0.0.1:3306', 9_999],
    ]);
    expect(entries.every((e) => e.level === 40 && e.code === 'ECONNREFUSED')).to.equal(true);
  });
});
