import { expect } from 'chai';
import { createJobQueues } from '../src/queue';
import type { JobQueues } from '../src/queue/types';
import { deleteRedisKeys, productionBackend, uniqueSuffix, waitFor } from '../src/testing';

type DriverFactory = () => Promise<{ queues: JobQueues; dispose(): Promise<void> } | null>;

const drivers: Array<[string, DriverFactory]> = [
  ['in-process', async () => ({ queues: createJobQueues({ prefix: `sbt_${uniqueSuffix()}` }), dispose: async () => {} })],
  [
    'bee-queue on Redis',
    async () => {
      const backend = await productionBackend();
      if (!backend) return null;
      const queues = createJobQueues({ redisUrl: backend.redisUrl, prefix: backend.redisPrefix, stallIntervalMs: 1000 });
      return { queues, dispose: () => backend.dispose() };
    },
  ],
];

for (const [name, factory] of drivers) {
  describe(`job queue contract [${name}]`, function () {
    let driver: { queues: JobQueues; dispose(): Promise<void> } | null = null;
    let queues: JobQueues;
    let counter = 0;
    const fresh = <T>() => queues.get<T>(`q${++counter}`);

    before(async function () {
      driver = await factory();
      if (!driver) this.skip();
      queues = driver.queues;
    });
    after(async () => {
      await driver?.queues.closeAll(2000);
      await driver?.dispose();
    });

    it('processes added jobs with their data and attempt number', async () => {
      const q = fresh<{ n: number }>();
      const seen: Array<[number, number]> = [];
      q.process(1, async (job) => {
        seen.push([job.data.n, job.attempt]);
      });
      await q.add({ n: 1 });
      await q.add({ n: 2 });
      await waitFor(() => seen.length === 2);
      expect(seen).to.have.deep.members([
        [1, 1],
        [2, 1],
      ]);
    });

    it('never runs more jobs at once than its concurrency', async () => {
      const q = fresh<number>();
      let running = 0;
      let peak = 0;
      let done = 0;
      q.process(3, async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 30));
        running -= 1;
        done += 1;
      });
      for (let i = 0; i < 10; i++) await q.add(i);
      await waitFor(() => done === 10, 10_000);
      expect(peak).to.equal(3);
    });

    it('retries a failing job with backoff, then succeeds', async () => {
      const q = fresh<string>();
      const attempts: Array<{ attempt: number; at: number }> = [];
      q.process(1, async (job) => {
        attempts.push({ attempt: job.attempt, at: Date.now() });
        if (job.attempt < 3) throw new Error('transient');
      });
      await q.add('x', { retries: 3, backoffMs: 100 });
      await waitFor(() => attempts.length === 3, 10_000);
      expect(attempts.map((a) => a.attempt)).to.deep.equal([1, 2, 3]);
      expect(attempts[1].at - attempts[0].at).to.be.at.least(90);
      expect(attempts[2].at - attempts[1].at).to.be.at.least(190);
      await waitFor(async () => (await q.counts()).active === 0);
      expect((await q.counts()).failed).to.equal(0);
    });

    it('counts a job as failed once its retries are used up', async () => {
      const q = fresh<string>();
      let calls = 0;
      q.process(1, async () => {
        calls += 1;
        throw new Error('permanent');
      });
      await q.add('x', { retries: 1, backoffMs: 50 });
      await waitFor(async () => (await q.counts()).failed === 1, 10_000);
      expect(calls).to.equal(2);
    });

    it('does not run a delayed job before its time', async () => {
      const q = fresh<string>();
      const added = Date.now();
      let ranAt = 0;
      q.process(1, async () => {
        ranAt = Date.now();
      });
      await q.add('later', { delayMs: 1200 });
      expect((await q.counts()).delayed).to.equal(1);
      await waitFor(() => ranAt > 0, 10_000);
      expect(ranAt - added).to.be.at.least(1100);
    });

    it('adds a job id only once while it is waiting', async () => {
      const q = fresh<number>();
      expect(await q.add(1, { jobId: 'same' })).to.equal('same');
      expect(await q.add(2, { jobId: 'same' })).to.equal('same');
      expect((await q.counts()).waiting).to.equal(1);
      const seen: number[] = [];
      q.process(1, async (job) => {
        seen.push(job.data);
      });
      await waitFor(() => seen.length === 1);
      await waitFor(async () => (await q.counts()).waiting === 0 && (await q.counts()).active === 0);
      expect(seen).to.deep.equal([1]);
    });

    it('lets an in-flight job finish on close', async () => {
      const own = name === 'in-process' ? createJobQueues({ prefix: 'x' }) : null;
      const q = own ? own.get<string>('closing') : fresh<string>();
      let finished = false;
      let started = false;
      q.process(1, async () => {
        started = true;
        await new Promise((r) => setTimeout(r, 200));
        finished = true;
      });
      await q.add('slow');
      await waitFor(() => started);
      await q.close(5000);
      expect(finished).to.equal(true);
    });
  });
}
