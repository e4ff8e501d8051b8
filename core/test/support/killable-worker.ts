import { createJobQueues } from '../../src/queue';

/** A worker process for the stall test: announces the job it took, then hangs until killed. */
const queues = createJobQueues({ redisUrl: process.env.REDIS_URL, prefix: process.env.PREFIX!, stallIntervalMs: 1000 });
queues.get<string>(process.env.QUEUE!).process(1, async (job) => {
  process.stdout.write(`took ${job.id}\n`);
  await new Promise(() => undefined);
});
