import { expect } from 'chai';
import { createClient, RedisClientType } from 'redis';
import { createJobQueues, defineJob } from '../src/queue';
import { ADD_WITHIN_MS } from '../src/queue/bee-queue';
import { queueSoon } from '../src/queue/queue-soon';
import { LOCK_COMMAND_MS, RedisLocks } from '../src/locks/redis-locks';
import { isRedisAway } from '../src/redis-away';
import {
  deleteRedisKeys,
  proxiedTestRedis,
  recordingLogger,
  requiredRedisUrl,
  uniqueSuffix,
  waitFor,
} from '../src/testing';

/**
 * A Redis that stalls: its connection taken, commands sent, nothing answered, nothing reset (a NAT that
 * lost the connection's state, a frozen server). node-redis holds such commands for ever: a lock or a
 * queue add on the request path held its request as long (session 36).
 */
describe('a Redis that stalls [redis]', () => {
  const prefix = `sbt_${uniqueSuffix()}`;
  let redisUrl: string;
  let proxy: Awaited<ReturnType<typeof proxiedTestRedis>>['proxy'];
  let proxiedUrl: string;
  before(async () => {
    redisUrl = (await requiredRedisUrl())!;
  });
  beforeEach(async () => {
    ({ proxy, url: proxiedUrl } = await proxiedTestRedis());
  });
  afterEach(async () => proxy.close());
  after(async () => deleteRedisKeys(redisUrl, prefix));

  const failure = async (work: Promise<unknown>) => {
    const started = Date.now();
    const err = await work.then(
      () => null,
      (e: unknown) => e,
    );
    return { err, ms: Date.now() - started };
  };

  it('fails a lock command within its deadline, as Redis away', async () => {
    const client = createClient({ url: proxiedUrl }) as RedisClientType;
    client.on('error', () => undefined);
    await client.connect();
    try {
      const locks = new RedisLocks(client, prefix);
      const held = (await locks.acquire('held', 30_000))!;
      expect(held).to.not.equal(null);
      proxy.blackHole();
      const acquire = await failure(locks.acquire('another', 30_000));
      expect(isRedisAway(acquire.err), String(acquire.err)).to.equal(true);
      expect(acquire.ms).to.be.within(LOCK_COMMAND_MS - 100, LOCK_COMMAND_MS + 3_000);
      const extend = await failure(held.extend(30_000));
      expect(isRedisAway(extend.err)).to.equal(true);
      const release = await failure(held.release());
      expect(isRedisAway(release.err)).to.equal(true);
    } finally {
      client.destroy();
    }
  }).timeout(30_000);

  it('says Redis away at once when node-redis refuses a lock command (offline), not an unknown error', async () => {
    const client = createClient({ url: proxiedUrl, disableOfflineQueue: true }) as RedisClientType;
    client.on('error', () => undefined);
    await client.connect();
    try {
      await proxy.close();
      await waitFor(() => !client.isReady, 5_000);
      const refused = await failure(new RedisLocks(client, prefix).acquire('offline', 30_000));
      expect(isRedisAway(refused.err), String(refused.err)).to.equal(true);
      expect(refused.ms).to.be.below(LOCK_COMMAND_MS);
    } finally {
      client.destroy();
    }
  }).timeout(30_000);

  it('fails a queue add within its deadline; queueSoon logs it and goes on', async () => {
    const queues = createJobQueues({ redisUrl: proxiedUrl, prefix, stallIntervalMs: 1000 });
    const queue = queues.get(defineJob<{ n: number }>('stalled-adds'));
    try {
      expect(await queue.add({ n: 1 }, { jobId: 'before' })).to.equal('before');
      proxy.blackHole();
      const add = await failure(queue.add({ n: 2 }, { jobId: 'during' }));
      expect(isRedisAway(add.err), String(add.err)).to.equal(true);
      expect((add.err as Error).message).to.contain('Redis did not take the job within 5 s');
      expect(add.ms).to.be.within(ADD_WITHIN_MS - 100, ADD_WITHIN_MS + 3_000);
      const { logger, entries } = recordingLogger();
      expect(await queueSoon(queue.add({ n: 3 }), logger, 'a test job')).to.equal(false);
      expect(entries.map((e) => e.msg)).to.deep.equal([
        'a test job not queued (Redis away): found again in the database later',
      ]);
      // Anything else is the caller's to see.
      const broken = await failure(queueSoon(Promise.reject(new Error('a bug')), logger, 'a test job'));
      expect((broken.err as Error).message).to.equal('a bug');
    } finally {
      await proxy.close();
      await queues.closeAll(1000);
    }
  }).timeout(60_000);
});
