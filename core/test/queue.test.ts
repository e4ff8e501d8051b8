import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { createJobQueues, defineJob } from '../src/queue';
import { beeRedisOptions } from '../src/queue/bee-queue';
import type { Job, JobQueue, JobQueues } from '../src/queue/types';
import { deleteRedisKeys, requiredRedisUrl, uniqueSuffix, waitFor } from '../src/testing';

const STALL_INTERVAL_MS = 1000;

function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

const drivers: Array<{ name: string; redisUrl(): Promise<string | null | undefined> }> = [
  { name: 'in-process', redisUrl: async () => undefined },
  { name: 'bee-queue on Redis', redisUrl: requiredRedisUrl },
];

for (const driver of drivers) {
  describe(`job queue contract [${driver.name}]`, function () {
    const prefix = `sbt_${uniqueSuffix()}`;
    let redisUrl: string | undefined;
    let queues: JobQueues | undefined;
    let counter = 0;
    const fresh = <T>(): JobQueue<T> => queues!.get(defineJob<T>(`q${++counter}`));
    const gates: Array<{ open(): void }> = [];
    const held = () => {
      const g = gate();
      gates.push(g);
      return g;
    };

    before(async function () {
      const url = await driver.redisUrl();
      if (url === null) this.skip();
      redisUrl = url;
      queues = createJobQueues({ redisUrl, prefix, stallIntervalMs: STALL_INTERVAL_MS });
    });
    after(async () => {
      for (const g of gates) g.open();
      await queues?.closeAll(2000);
      if (redisUrl) await deleteRedisKeys(redisUrl, prefix);
    });

    it('processes jobs with their data, stored as JSON, and attempt number', async () => {
      const q = fresh<{ n: number; at?: Date }>();
      const seen: Array<Job<unknown>> = [];
      q.process(1, async (job) => {
        seen.push(job);
      });
      const first = await q.add({ n: 1, at: new Date(0) });
      const second = await q.add({ n: 2 });
      expect(first).not.to.equal(second);
      await waitFor(() => seen.length === 2);
      expect(seen).to.have.deep.members([
        { id: first, data: { n: 1, at: '1970-01-01T00:00:00.000Z' }, attempt: 1 },
        { id: second, data: { n: 2 }, attempt: 1 },
      ]);
    });

    it('never runs more jobs at once than its concurrency, and uses all of it', async () => {
      const q = fresh<number>();
      for (let i = 0; i < 9; i++) await q.add(i);
      let running = 0;
      let peak = 0;
      const done: number[] = [];
      q.process(3, async (job) => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 50));
        running -= 1;
        done.push(job.data);
      });
      await waitFor(() => done.length === 9, 10_000);
      expect(peak).to.equal(3);
      expect(done).to.have.members([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    });

    it('retries a failing job with exponential backoff, then succeeds', async () => {
      const q = fresh<string>();
      const attempts: Array<{ attempt: number; at: number }> = [];
      q.process(1, async (job) => {
        attempts.push({ attempt: job.attempt, at: Date.now() });
        if (job.attempt < 3) throw new Error('transient');
      });
      await q.add('x', { retries: 3, backoffMs: 100 });
      await waitFor(() => attempts.length === 3, 10_000);
      expect(attempts.map((a) => a.attempt)).to.deep.equal([1, 2, 3]);
      expect(attempts[1].at - attempts[0].at).to.be.at.least(95);
      expect(attempts[2].at - attempts[1].at).to.be.at.least(195);
      await waitFor(async () => (await q.counts()).active === 0);
      expect(await q.counts()).to.deep.equal({ waiting: 0, active: 0, delayed: 0, failed: 0 });
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
      expect(await q.counts()).to.deep.equal({ waiting: 0, active: 0, delayed: 0, failed: 1 });
    });

    it('does not run a delayed job before its time', async () => {
      const q = fresh<string>();
      const added = Date.now();
      await q.add('later', { delayMs: 600 });
      await q.add('now');
      expect(await q.counts()).to.include({ waiting: 1, delayed: 1 });
      const ran: Array<[string, number]> = [];
      q.process(1, async (job) => {
        ran.push([job.data, Date.now() - added]);
      });
      await waitFor(() => ran.length === 2, 10_000);
      expect(ran.map(([data]) => data)).to.deep.equal(['now', 'later']);
      expect(ran[1][1]).to.be.at.least(595);
    });

    it('adds a job id only once while it waits, is delayed or runs', async () => {
      const waiting = fresh<number>();
      expect(await waiting.add(1, { jobId: 'same' })).to.equal('same');
      expect(await waiting.add(2, { jobId: 'same' })).to.equal('same');
      expect(await waiting.counts()).to.include({ waiting: 1 });

      const delayed = fresh<number>();
      expect(await delayed.add(1, { jobId: 'later', delayMs: 60_000 })).to.equal('later');
      expect(await delayed.add(2, { jobId: 'later' })).to.equal('later');
      expect(await delayed.counts()).to.include({ waiting: 0, delayed: 1 });

      const active = fresh<number>();
      const release = held();
      const seen: number[] = [];
      active.process(2, async (job) => {
        seen.push(job.data);
        await release.opened;
      });
      await active.add(1, { jobId: 'busy' });
      await waitFor(() => seen.length === 1);
      expect(await active.add(2, { jobId: 'busy' })).to.equal('busy');
      expect(await active.counts()).to.include({ waiting: 0, active: 1 });
      release.open();
      await waitFor(async () => (await active.counts()).active === 0);
      expect(seen).to.deep.equal([1]);
    });

    it('takes a job id again once its job succeeded or failed for good', async () => {
      const q = fresh<string>();
      const seen: string[] = [];
      q.process(1, async (job) => {
        seen.push(job.data);
        if (job.data.startsWith('fail')) throw new Error('no');
      });
      await q.add('ok-1', { jobId: 'ok' });
      await waitFor(() => seen.length === 1);
      await q.add('fail-1', { jobId: 'bad' });
      await waitFor(async () => (await q.counts()).failed === 1);
      expect(await q.add('ok-2', { jobId: 'ok' })).to.equal('ok');
      expect(await q.add('fail-2', { jobId: 'bad' })).to.equal('bad');
      await waitFor(() => seen.length === 4);
      expect(seen).to.deep.equal(['ok-1', 'fail-1', 'ok-2', 'fail-2']);
    });

    it('refuses all-digit job ids, which would collide with its own numbering', async () => {
      let error: Error | undefined;
      await fresh<number>()
        .add(1, { jobId: '42' })
        .catch((err: Error) => (error = err));
      expect(error?.message).to.match(/must contain a non-digit/);
    });

    it('lets an in-flight job finish on close', async () => {
      const q = fresh<string>();
      let started = false;
      let finished = false;
      q.process(1, async () => {
        started = true;
        await new Promise((r) => setTimeout(r, 300));
        finished = true;
      });
      await q.add('slow');
      await waitFor(() => started);
      await q.close(5000);
      expect(finished).to.equal(true);
    });

    it('gives up waiting for a hanging job after the close timeout', async () => {
      const q = fresh<string>();
      const hang = held();
      let started = false;
      q.process(1, async () => {
        started = true;
        await hang.opened;
      });
      await q.add('stuck');
      await waitFor(() => started);
      const before = Date.now();
      await q.close(300);
      expect(Date.now() - before).to.be.within(250, 2000);
    });

    if (driver.name === 'bee-queue on Redis') {
      it('gives the job of a SIGKILLed worker to another worker after the stall interval', async () => {
        const q = fresh<string>();
        const id = await q.add('precious');
        const worker = `
          const { createJobQueues } = require(${JSON.stringify(path.join(__dirname, '../src/queue'))});
          const queues = createJobQueues({ redisUrl: process.env.REDIS_URL, prefix: process.env.PREFIX, stallIntervalMs: ${STALL_INTERVAL_MS} });
          queues.get(process.env.QUEUE).process(1, async (job) => {
            process.stdout.write('took ' + job.id + '\\n');
            await new Promise(() => {});
          });`;
        const child = spawn(process.execPath, ['-e', worker], {
          env: { ...process.env, REDIS_URL: redisUrl, PREFIX: prefix, QUEUE: q.name },
        });
        const exited = new Promise((resolve) => child.once('exit', resolve));
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        try {
          await waitFor(() => output.includes(`took ${id}\n`), 10_000).catch((err) => {
            throw new Error(`${err.message}; worker said: ${output}`);
          });
        } finally {
          child.kill('SIGKILL');
          await exited;
        }
        expect(await q.counts()).to.include({ active: 1, waiting: 0 });

        const done: Array<Job<string>> = [];
        q.process(1, async (job) => {
          done.push(job);
        });
        await waitFor(() => done.length === 1, 4 * STALL_INTERVAL_MS + 2000);
        expect(done).to.deep.equal([{ id, data: 'precious', attempt: 1 }]);
        await waitFor(async () => (await q.counts()).active === 0);
        expect(await q.counts()).to.deep.equal({ waiting: 0, active: 0, delayed: 0, failed: 0 });
      });
    }
  });
}

describe('bee-queue connection options', () => {
  it('are built from the Redis URL for the node-redis 3 client bee-queue brings', () => {
    expect(beeRedisOptions('rediss://app:p%40ss@[::1]:6380/2')).to.include({
      host: '::1',
      port: 6380,
      user: 'app',
      password: 'p@ss',
      db: 2,
    });
    expect(beeRedisOptions('rediss://[::1]')).to.deep.include({ tls: { servername: '::1' }, port: 6379 });
    expect(beeRedisOptions('redis://localhost')).not.to.have.any.keys('user', 'password', 'db', 'tls');
    expect(() => beeRedisOptions('http://localhost')).to.throw('not a redis:// URL');
  });
});

describe('job queue on Redis: a Redis back from a restart', () => {
  const prefix = `sbt_${uniqueSuffix()}`;
  let redisUrl: string;
  let queues: JobQueues;
  // bee-queue's job, whose save runs its Lua script by hash (EVALSHA).
  const Job = require('bee-queue/lib/job') as { prototype: { save(): Promise<unknown> } };
  const save = Job.prototype.save;
  before(async () => {
    redisUrl = (await requiredRedisUrl())!;
    queues = createJobQueues({ redisUrl, prefix, stallIntervalMs: STALL_INTERVAL_MS });
  });
  after(async () => {
    Job.prototype.save = save;
    await queues?.closeAll(2000);
    await deleteRedisKeys(redisUrl, prefix);
  });

  it('adds a job that met NOSCRIPT (the offline queue ran before the scripts were loaded again), once', async () => {
    let refused = 0;
    Job.prototype.save = function (this: unknown) {
      if (refused++ === 0) return Promise.reject(new Error('NOSCRIPT No matching script. Please use EVAL.'));
      return save.call(this);
    };
    const queue = queues.get(defineJob<{ n: number }>('noscript'));
    const seen: number[] = [];
    await queue.add({ n: 7 }, { jobId: 'after-restart' });
    Job.prototype.save = save;
    queue.process(1, async (job: Job<{ n: number }>) => void seen.push(job.data.n));
    await waitFor(() => seen.length === 1, 10_000);
    expect([refused, seen]).to.deep.equal([2, [7]]);
  });
});
