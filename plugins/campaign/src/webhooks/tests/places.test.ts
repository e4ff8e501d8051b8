import { expect } from 'chai';
import { CLAIMED_PER_PLACE, Due, Places } from '../places';

const due = (id: number, webhookId: number): Due => ({
  id,
  webhookId,
  eventId: `evt_${id}`,
  body: '{}',
  attempts: 0,
  url: 'http://127.0.0.1/',
  secret: 'whsec_x',
});

const WAIT_MS = 1_000;

/** A run's places: `placesOf` a subscription's share, `answers` whether its receiver answered. */
const placesOf = (concurrency: number, share: (id: number) => number, answers: (id: number) => boolean = () => true) =>
  new Places(concurrency, share, answers, WAIT_MS);

describe("campaign: a webhook run's places", () => {
  it('claims ahead up to CLAIMED_PER_PLACE times the places, and as many times its share for a subscription', () => {
    const places = placesOf(8, (id) => (id === 2 ? 2 : 8));
    expect(places.room()).to.equal(8 * CLAIMED_PER_PLACE);
    expect(places.roomOf(2)).to.equal(2 * CLAIMED_PER_PLACE);
    places.claimed(
      Array.from({ length: 2 * CLAIMED_PER_PLACE }, (_, i) => due(i + 1, 2)),
      0,
    );
    expect(places.roomOf(2)).to.equal(0);
    expect(places.full()).to.deep.equal([2]);
    expect(places.room()).to.equal(6 * CLAIMED_PER_PLACE);
  });

  it('claims no more than its places for a subscription whose receiver does not answer', () => {
    const places = placesOf(
      8,
      () => 2,
      (id) => id !== 3,
    );
    expect(places.roomOf(3)).to.equal(2);
    expect(places.roomOf(4)).to.equal(2 * CLAIMED_PER_PLACE);
    places.claimed([due(1, 3), due(2, 3)], 0);
    expect(places.full()).to.deep.equal([3]);
  });

  it("starts in claim order within a subscription's places; its waiting ones do not hold up another's", () => {
    const places = placesOf(4, (id) => (id === 1 ? 1 : 4));
    places.claimed([due(1, 1), due(2, 1), due(3, 2), due(4, 2), due(5, 2), due(6, 2)], 0);
    const started = [places.start(0), places.start(0), places.start(0), places.start(0)].map((d) => d?.id);
    // The hanging one's second waits; the other's fill the rest of the places, then all are taken.
    expect(started).to.deep.equal([1, 3, 4, 5]);
    expect(places.start(0)).to.equal(null);
    places.ended(2);
    expect(places.start(0)?.id).to.equal(6);
    places.ended(1);
    expect(places.start(0)?.id).to.equal(2);
    expect(places.inFlight).to.equal(4);
  });

  it('lets go of a claimed delivery that waited longer than a try may take, so its lease still covers a try', () => {
    const places = placesOf(1, () => 1);
    places.claimed([due(1, 1), due(2, 1)], 0);
    expect(places.start(0)?.id).to.equal(1);
    places.ended(1);
    expect(places.start(WAIT_MS + 1)).to.equal(null);
    expect(places.held).to.equal(0);
    expect(places.roomOf(1)).to.equal(CLAIMED_PER_PLACE);
  });

  it('lets go of every waiting delivery when the run stops taking', () => {
    const places = placesOf(1, () => 1);
    places.claimed([due(1, 1), due(2, 1)], 0);
    places.start(0);
    places.dropWaiting();
    expect(places.held).to.equal(1);
    places.ended(1);
    expect(places.held).to.equal(0);
    expect(places.full()).to.deep.equal([]);
  });
});
