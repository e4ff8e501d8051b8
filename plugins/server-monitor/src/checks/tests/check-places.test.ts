import { expect } from 'chai';
import { CheckPlaces } from '../places';

/** A check that runs until the test ends it. */
function heldCheck() {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  return { run: () => done, end };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('server-monitor: one worker’s check places', () => {
  it('hands a freed place to a waiting premium check before any free one, and keeps a tenth for premium', async () => {
    const places = new CheckPlaces(20);
    const started: string[] = [];
    const checks = new Map<string, ReturnType<typeof heldCheck>>();
    const start = (tier: 'premium' | 'free', name: string) => {
      const check = heldCheck();
      checks.set(name, check);
      void places.run(tier, async () => {
        started.push(name);
        await check.run();
      });
    };

    for (let i = 0; i < 30; i++) start('free', `f${i}`);
    await settle();
    expect(started, 'free checks hold at most all but a tenth').to.have.length(18);

    for (let i = 0; i < 5; i++) start('premium', `p${i}`);
    await settle();
    expect(started.slice(18), 'the premium-only places').to.deep.equal(['p0', 'p1']);

    for (let i = 0; i < 3; i++) checks.get(`f${i}`)!.end();
    await settle();
    expect(started.slice(20), 'freed places go to waiting premium checks').to.deep.equal(['p2', 'p3', 'p4']);

    checks.get('f3')!.end();
    checks.get('p0')!.end();
    await settle();
    expect(started.slice(23), 'free again once no premium check waits').to.deep.equal(['f18', 'f19']);
  });
});
