import { spawn } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { createJobQueues } from '../src/queue';
import { productionBackend, TestBackend, waitFor } from '../src/testing';

describe('bee-queue: a killed worker loses no job', function () {
  let backend: TestBackend | null = null;
  before(async function () {
    backend = await productionBackend();
    if (!backend) this.skip();
  });
  after(async () => backend?.dispose());

  it('hands the job of a SIGKILLed worker to another worker after the stall interval', async () => {
    const queues = createJobQueues({ redisUrl: backend!.redisUrl, prefix: backend!.redisPrefix, stallIntervalMs: 1000 });
    const queue = queues.get<string>('stall');
    const child = spawn(process.execPath, [path.join(__dirname, 'support/killable-worker.js')], {
      env: { ...process.env, REDIS_URL: backend!.redisUrl, PREFIX: backend!.redisPrefix, QUEUE: 'stall' },
    });
    try {
      let output = '';
      child.stdout.on('data', (c) => (output += c));
      const id = await queue.add('precious');
      await waitFor(() => output.includes(`took ${id}`), 10_000);
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));

      const done: Array<{ id: string; data: string }> = [];
      queue.process(1, async (job) => {
        done.push({ id: job.id, data: job.data });
      });
      await waitFor(() => done.length === 1, 15_000);
      expect(done).to.deep.equal([{ id, data: 'precious' }]);
    } finally {
      child.kill('SIGKILL');
      await queues.closeAll(2000);
    }
  });
});
