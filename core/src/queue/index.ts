import { BeeJobQueues } from './bee-queue';
import { MemoryJobQueues } from './memory-queue';
import type { JobQueues } from './types';

export * from './types';

export interface JobQueuesOptions {
  redisUrl?: string;
  prefix: string;
  stallIntervalMs?: number;
  logger?: { error(obj: unknown, msg?: string): void };
}

/** bee-queue on Redis when redisUrl is set, else the in-process driver. */
export function createJobQueues(options: JobQueuesOptions): JobQueues {
  if (!options.redisUrl) return new MemoryJobQueues();
  return new BeeJobQueues({
    redisUrl: options.redisUrl,
    prefix: options.prefix,
    stallIntervalMs: options.stallIntervalMs ?? 5000,
    onError: (err, queue) => options.logger?.error({ err, queue }, 'queue error'),
  });
}
