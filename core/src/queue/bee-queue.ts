import BeeQueue from 'bee-queue';
import type { RedisClientType } from 'redis';
import { assertJobId } from './types';
import { QueueRegistry } from './queue-registry';
import { loadOnFirstUse } from '../load-on-first-use';
import { withinRedisDeadline } from '../redis-away';
import type { AddJobOptions, JobHandler, JobQueue, QueueCounts, QueueLogger } from './types';

/** Stored job payload: the data plus the retries it started with, to tell the attempt number. */
interface Envelope<T> {
  d: T;
  r: number;
}

export interface BeeQueueSettings {
  redisUrl: string;
  /** Every key lives under `<prefix>:bq:<queue name>:`. */
  prefix: string;
  /** A job whose worker stopped renewing its lease this long ago is given to another worker. */
  stallIntervalMs: number;
  logger?: QueueLogger;
  /** The process's own Redis client: counts of queues it has not opened are read on it (not opening them). */
  reader?: RedisClientType | null;
}

const COUNTS_WITHIN_MS = 2_000;
export const ADD_WITHIN_MS = 5_000;

/** bee-queue 2 brings node-redis 3, which takes connection options rather than our URLs. */
export function beeRedisOptions(redisUrl: string): Record<string, unknown> {
  const url = new URL(redisUrl);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new Error(`not a redis:// URL: ${url.protocol}`);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  const db = url.pathname.slice(1);
  return {
    host,
    port: Number(url.port || 6379),
    ...(url.username && { user: decodeURIComponent(url.username) }),
    ...(url.password && { password: decodeURIComponent(url.password) }),
    ...(db && { db: Number(db) }),
    ...(url.protocol === 'rediss:' && { tls: { servername: host } }),
    // node-redis 3 otherwise waits longer and longer between reconnects (x1.7 each time).
    retry_strategy: ({ attempt }: { attempt: number }) => Math.min(attempt * 250, 5000),
  };
}

/** bee-queue's Lua scripts, which it loads into Redis once, when it connects (bee-queue/lib/lua). */
const beeLua = loadOnFirstUse(() => require('bee-queue/lib/lua') as { buildCache(client: unknown): Promise<unknown> });

/**
 * bee-queue loads its Lua scripts into Redis once and then calls them by hash (EVALSHA). A Redis that
 * restarts has none: every add, take and stall check would fail with NOSCRIPT from then on. node-redis
 * emits 'ready' on each reconnection; the scripts are loaded again there.
 */
function reloadScriptsOnReconnect(queue: BeeQueue<any>, name: string, log?: QueueLogger): void {
  const client = (queue as unknown as { client: NodeJS.EventEmitter }).client;
  client.on('ready', () => {
    beeLua()
      .buildCache(client)
      .then(
        () => log?.warn({ queue: name }, 'Redis reconnected: queue scripts loaded again'),
        (err: unknown) => log?.error({ queue: name, err }, 'queue scripts not loaded again'),
      );
  });
}

/**
 * The Redis driver. One bee-queue instance per queue, created on first use; it opens a worker
 * connection but takes no job before process() is called, so producers never process. A worker
 * renews a lease on each active job, so the job of a killed worker is run again after the stall
 * interval by another worker (at-least-once: handlers must be idempotent).
 */
export class BeeJobQueue<T = unknown> implements JobQueue<T> {
  private instance?: BeeQueue<Envelope<T>>;
  private processing = false;

  constructor(
    readonly name: string,
    private readonly settings: BeeQueueSettings,
  ) {}

  private get queue(): BeeQueue<Envelope<T>> {
    return (this.instance ??= this.create());
  }

  private create(): BeeQueue<Envelope<T>> {
    const queue = new BeeQueue<Envelope<T>>(this.name, {
      redis: beeRedisOptions(this.settings.redisUrl),
      prefix: `${this.settings.prefix}:bq`,
      isWorker: true,
      // Delayed jobs and retries waiting for their backoff only move on where this is set.
      activateDelayedJobs: true,
      removeOnSuccess: true,
      getEvents: false,
      sendEvents: false,
      // Otherwise bee-queue keeps every job it created in a Map for the life of the process.
      storeJobs: false,
      stallInterval: this.settings.stallIntervalMs,
    });
    const log = this.settings.logger;
    const fields = (job: BeeQueue.Job<Envelope<T>>, err: Error) => ({ queue: this.name, jobId: job.id, err });
    queue.on('error', (err) => log?.error({ queue: this.name, err }, 'queue error'));
    queue.on('retrying', (job, err) => log?.warn(fields(job, err), 'job failed; retrying'));
    // bee-queue also emits 'failed' before each retry; only the last one has the status failed.
    queue.on('failed', (job, err) => job.status === 'failed' && log?.error(fields(job, err), 'job failed for good'));
    queue.on('stalled', (jobId) => log?.warn({ queue: this.name, jobId }, 'job stalled; queued again'));
    void queue.ready().then(
      () => reloadScriptsOnReconnect(queue, this.name, log),
      () => undefined,
    );
    return queue;
  }

  /**
   * Fails (RedisAwayError) when Redis has not taken the job within ADD_WITHIN_MS: bee-queue's client holds
   * commands while Redis is away and never hears back on a stalled connection, which held every request
   * queuing work for as long as the outage lasted (session 36). A restart's few seconds are waited through.
   */
  add(data: T, options: AddJobOptions = {}): Promise<string> {
    return withinRedisDeadline(
      this.addNow(data, options),
      ADD_WITHIN_MS,
      `queue ${this.name}: Redis did not take the job within ${ADD_WITHIN_MS / 1000} s`,
    );
  }

  private async addNow(data: T, options: AddJobOptions): Promise<string> {
    const { jobId } = options;
    if (jobId === undefined) {
      const id = await this.save(data, options);
      if (id === null) throw new Error(`queue ${this.name}: bee-queue refused a job without id`);
      return id;
    }
    assertJobId(jobId);
    if ((await this.save(data, options)) !== null) return jobId;
    // The id exists. A failed job keeps its id in bee-queue; the contract lets such an id be added anew.
    const existing = await this.queue.getJob(jobId);
    if (existing?.status !== 'failed') return jobId;
    await this.queue.removeJob(jobId);
    await this.save(data, options);
    return jobId;
  }

  /** The new job's id, or null when bee-queue found the id taken and added nothing. */
  private async save(data: T, options: AddJobOptions): Promise<string | null> {
    const retries = options.retries ?? 0;
    const job = this.queue.createJob({ d: data, r: retries });
    if (options.jobId !== undefined) job.setId(options.jobId);
    if (retries > 0) {
      const backoffMs = Math.round(options.backoffMs ?? 1000);
      job.retries(retries);
      if (backoffMs > 0) job.backoff('exponential', backoffMs);
      else job.backoff('immediate');
    }
    if (options.delayMs && options.delayMs > 0) job.delayUntil(Date.now() + options.delayMs);
    try {
      return (await job.save()).id ?? null;
    } catch (err) {
      // A Redis back from a restart runs the commands that waited for it before 'ready' reloads the
      // scripts (node-redis 3 sends its offline queue first): load them now, and save once more.
      if (!/NOSCRIPT/.test(String((err as Error)?.message))) throw err;
      await this.queue.ready();
      await beeLua().buildCache((this.queue as unknown as { client: unknown }).client);
      return (await job.save()).id ?? null;
    }
  }

  process(concurrency: number, handler: JobHandler<T>): void {
    if (this.processing) throw new Error(`queue ${this.name} already has a processor`);
    this.processing = true;
    this.queue.process(Math.max(1, Math.floor(concurrency)), async (job) => {
      const { d, r } = job.data;
      return handler({ id: job.id, data: d, attempt: r - (job.options.retries ?? 0) + 1 });
    });
    // process() checks once; this keeps checking. Half the interval, as bee-queue advises: a check
    // skipped because the previous one ran less than stallInterval ago would double the delay.
    this.queue
      .checkStalledJobs(Math.max(1, Math.floor(this.settings.stallIntervalMs / 2)))
      .catch((err) => this.settings.logger?.error({ queue: this.name, err }, 'stalled job check failed'));
  }

  /** Its jobs by state; an error after 2 s of a Redis that does not answer (node-redis would wait for it). */
  async counts(): Promise<QueueCounts> {
    const health = await withinRedisDeadline(
      this.queue.checkHealth(),
      COUNTS_WITHIN_MS,
      `queue ${this.name}: Redis did not answer within ${COUNTS_WITHIN_MS / 1000} s`,
    );
    return { waiting: health.waiting, active: health.active, delayed: health.delayed, failed: health.failed };
  }

  async close(timeoutMs = 5000): Promise<void> {
    if (!this.instance) return;
    try {
      await this.instance.close(Math.max(1, Math.round(timeoutMs)));
    } catch (err) {
      // bee-queue rejects when jobs outlive the timeout, though it has closed its connections.
      this.settings.logger?.warn(
        { queue: this.name, err },
        'queue not closed in time; its unfinished jobs run again once they stall',
      );
    }
  }
}

export class BeeJobQueues extends QueueRegistry<BeeJobQueue<any>> {
  constructor(settings: BeeQueueSettings) {
    const reader = settings.reader;
    super(
      (name) => new BeeJobQueue(name, settings),
      reader ? (name) => keyCounts(reader, settings.prefix, name) : undefined,
    );
  }
}

/**
 * A queue's jobs by state read from its keys, as bee-queue's checkHealth reads them: opening the queue in a
 * process that only reports on it (an API process's /metrics) would open its worker connections.
 */
async function keyCounts(reader: RedisClientType, prefix: string, name: string): Promise<QueueCounts> {
  const key = (part: string) => `${prefix}:bq:${name}:${part}`;
  const [waiting, active, delayed, failed] = await withinRedisDeadline(
    reader.multi().lLen(key('waiting')).lLen(key('active')).zCard(key('delayed')).sCard(key('failed')).exec(),
    COUNTS_WITHIN_MS,
    `queue ${name}: Redis did not answer within ${COUNTS_WITHIN_MS / 1000} s`,
  );
  return { waiting: Number(waiting), active: Number(active), delayed: Number(delayed), failed: Number(failed) };
}
