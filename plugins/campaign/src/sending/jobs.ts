import type { JobQueues, PluginContext, RecurringTask } from '@switchboard/core';
import { SEND_RANGE_JOB } from './send-job';
import { SendWorker } from './send-worker';
import { SendWatchdog } from './watchdog';

/** Ranges worked on at once by one process; each sends its claimed recipients concurrently. */
const RANGES_AT_ONCE = 4;

export function processSendRanges(queues: JobQueues, ctx: PluginContext): void {
  const worker = ctx.container.resolve(SendWorker);
  queues.get(SEND_RANGE_JOB).process(RANGES_AT_ONCE, (job) => worker.run(job.data));
}

export function sendWatchdogTask(ctx: PluginContext): RecurringTask {
  const watchdog = ctx.container.resolve(SendWatchdog);
  return { name: 'campaign.send-watchdog', cron: '*/5 * * * * *', run: (now) => watchdog.tick(now) };
}
