import { MemoryJobQueues } from './memory-queue';
import type { RedisClientType } from 'redis';
import type { JobQueues, QueueLogger } from './types';
import { loadOnFirstUse } from '../load-on-first-use';

const beeQueueDriver = loadOnFirstUse(() => require('./bee-queue') as typeof import('./bee-queue'));

export * from './types';
export { gatedQueues } from './gated-queues';
export type { JobGate } from './gated-queues';

export interface JobQueuesOptions {
  /** bee-queue on this Redis when set, else the in-process driver. */
  redisUrl?: string;
  /** Namespace of every Redis key of the queues. */
  prefix: string;
  /** How long a job may go without its worker's heartbeat before another worker runs it (default 5000). */
  stallIntervalMs?: number;
  logger?: QueueLogger;
  /** The process's Redis client, for the counts of queues it has not opened (bee-queue driver). */
  reader?: RedisClientType | null;
}

export function createJobQueues(options: JobQueuesOptions): JobQueues {
  if (!options.redisUrl) return new MemoryJobQueues(options.logger);
  const { BeeJobQueues } = beeQueueDriver();
  return new BeeJobQueues({
    redisUrl: options.redisUrl,
    prefix: options.prefix,
    stallIntervalMs: options.stallIntervalMs ?? 5000,
    logger: options.logger,
    reader: options.reader,
  });
}
