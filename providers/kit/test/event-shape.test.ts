import { expect } from 'chai';
import { checkedEvents, eventProblem } from '../src';

const good = {
  type: 'delivered',
  recipient: 'ada@example.com',
  messageId: 4,
  subscriberId: 5,
  providerMessageId: null,
  providerEventId: 'e-1',
  occurredAt: new Date('2026-11-27T10:00:00Z'),
  raw: {},
};

describe('provider kit: the events an adapter returns, as the host records them', () => {
  it('takes a NormalizedEvent, and nullable fields left out as null', () => {
    expect(eventProblem(good)).to.equal(null);
    const { messageId: _m, subscriberId: _s, recipient: _r, providerMessageId: _p, ...untagged } = good;
    expect(checkedEvents('provider_f', [untagged])).to.deep.equal([
      { ...untagged, messageId: null, subscriberId: null, recipient: null, providerMessageId: null },
    ]);
  });

  it('names what breaks the contract: the host answers 500 naming it, the provider retries', () => {
    const problems = [
      [{ ...good, type: 'bounce' }, 'type "bounce" is none of EVENT_TYPES'],
      [{ ...good, type: 'constructor' }, 'type "constructor" is none of EVENT_TYPES'],
      [{ ...good, bounce: 'permanent' }, 'bounce is neither hard nor soft'],
      [{ ...good, providerEventId: '' }, 'providerEventId is not a non-empty string'],
      [{ ...good, providerEventId: 17 }, 'providerEventId is not a non-empty string'],
      [{ ...good, occurredAt: '2026-11-27T10:00:00Z' }, 'occurredAt is not a valid Date'],
      [{ ...good, occurredAt: new Date(NaN) }, 'occurredAt is not a valid Date'],
      [{ ...good, messageId: '4' }, 'messageId is neither a positive integer nor null'],
      [{ ...good, subscriberId: 1.5 }, 'subscriberId is neither a positive integer nor null'],
      [{ ...good, recipient: 7 }, 'recipient is neither a string nor null'],
      [{ ...good, url: {} }, 'url is not a string'],
      [null, 'is not an object'],
    ] as const;
    for (const [event, problem] of problems) {
      expect(eventProblem(event)).to.equal(problem);
      expect(() => checkedEvents('provider_f', [good, event])).to.throw(
        `Provider adapter provider_f: event 1 ${problem}`,
      );
    }
    expect(() => checkedEvents('provider_f', 'abc')).to.throw(
      'Provider adapter provider_f: normalize returned no array',
    );
  });
});
