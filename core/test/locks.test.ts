import { expect } from 'chai';
import { createClient, RedisClientType } from 'redis';
import { createLocks } from '../src/locks';
import type { Locks } from '../src/locks/types';
import { productionBackend, TestBackend, waitFor } from '../src/testing';

const drivers: Array<[string, () => Promise<{ locks: Locks; dispose(): Promise<void> } | null>]> = [
  ['in-process', async () => ({ locks: createLocks({ redis: null, prefix: 'x' }), dispose: async () => {} })],
  [
    'Redis',
    async () => {
      const backend: TestBackend | null = await productionBackend();
      if (!backend) return null;
      const redis = createClient({ url: backend.redisUrl }) as RedisClientType;
      await redis.connect();
      return {
        locks: createLocks({ redis, prefix: backend.redisPrefix }),
        dispose: async () => {
          await redis.quit();
          await backend.dispose();
        },
      };
    },
  ],
];

for (const [name, factory] of drivers) {
  describe(`locks [${name}]`, function () {
    let driver: { locks: Locks; dispose(): Promise<void> } | null = null;
    before(async function () {
      driver = await factory();
      if (!driver) this.skip();
    });
    after(async () => driver?.dispose());

    it('gives a key to one holder at a time', async () => {
      const first = await driver!.locks.acquire('exclusive', 5000);
      expect(first).not.to.equal(null);
      expect(await driver!.locks.acquire('exclusive', 5000)).to.equal(null);
      await first!.release();
      const second = await driver!.locks.acquire('exclusive', 5000);
      expect(second).not.to.equal(null);
      await second!.release();
    });

    it('frees a key when its holder lets it expire', async () => {
      expect(await driver!.locks.acquire('expiring', 100)).not.to.equal(null);
      let next = null;
      await waitFor(async () => (next = await driver!.locks.acquire('expiring', 5000)) !== null, 2000);
      expect(next).not.to.equal(null);
    });

    it('never releases or extends a lock that passed to someone else', async () => {
      const stale = await driver!.locks.acquire('handover', 100);
      let current = null;
      await waitFor(async () => (current = await driver!.locks.acquire('handover', 5000)) !== null, 2000);
      await stale!.release();
      expect(await stale!.extend(5000)).to.equal(false);
      expect(await driver!.locks.acquire('handover', 5000)).to.equal(null);
      expect(await current!.extend(5000)).to.equal(true);
    });
  });
}
