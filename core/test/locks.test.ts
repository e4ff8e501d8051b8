import { expect } from 'chai';
import { createLocks } from '../src/locks';
import type { LockHandle, Locks } from '../src/locks/types';
import { deleteRedisKeys, requiredRedisUrl, uniqueSuffix, waitFor } from '../src/testing';

const drivers: Array<{ name: string; redisUrl(): Promise<string | null | undefined> }> = [
  { name: 'in-process', redisUrl: async () => undefined },
  { name: 'Redis', redisUrl: requiredRedisUrl },
];

for (const driver of drivers) {
  describe(`locks [${driver.name}]`, function () {
    const prefix = `sbt_${uniqueSuffix()}`;
    let redisUrl: string | undefined;
    let locks: Locks;

    before(async function () {
      const url = await driver.redisUrl();
      if (url === null) this.skip();
      redisUrl = url;
      locks = createLocks({ redisUrl, prefix });
    });
    after(async () => {
      await locks?.close();
      if (redisUrl) await deleteRedisKeys(redisUrl, prefix);
    });

    /** Takes the key as soon as its current holder's lock lapses. */
    const takeOnceFree = async (key: string, ttlMs: number): Promise<LockHandle> => {
      let handle: LockHandle | null = null;
      await waitFor(async () => (handle = await locks.acquire(key, ttlMs)) !== null, 3000);
      return handle!;
    };

    it('gives a key to one holder at a time, and other keys to others', async () => {
      const first = await locks.acquire('exclusive', 5000);
      expect(first?.key).to.equal('exclusive');
      expect(await locks.acquire('exclusive', 5000)).to.equal(null);
      const other = await locks.acquire('another', 5000);
      expect(other).not.to.equal(null);
      await first!.release();
      await first!.release();
      const second = await locks.acquire('exclusive', 5000);
      expect(second).not.to.equal(null);
      await second!.release();
      await other!.release();
    });

    it('frees a key when its holder lets it expire', async () => {
      const started = Date.now();
      expect(await locks.acquire('expiring', 200)).not.to.equal(null);
      expect(await locks.acquire('expiring', 5000)).to.equal(null);
      const next = await takeOnceFree('expiring', 5000);
      expect(Date.now() - started).to.be.at.least(190);
      await next.release();
    });

    it('never releases or extends a lock that passed to someone else', async () => {
      const stale = await locks.acquire('handover', 100);
      const current = await takeOnceFree('handover', 5000);
      await stale!.release();
      expect(await stale!.extend(5000)).to.equal(false);
      expect(await locks.acquire('handover', 5000)).to.equal(null);
      expect(await current.extend(5000)).to.equal(true);
      await current.release();
    });

    it('keeps an extended lock past its first expiry', async () => {
      const started = Date.now();
      const lock = await locks.acquire('extended', 200);
      expect(await lock!.extend(1000)).to.equal(true);
      const next = await takeOnceFree('extended', 5000);
      expect(Date.now() - started).to.be.at.least(990);
      expect(await lock!.extend(1000)).to.equal(false);
      await next.release();
    });
  });
}
