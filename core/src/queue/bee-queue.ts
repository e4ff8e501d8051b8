import BeeQueue from 'bee-queue';
import type { AddJobOptions, JobHandler, JobQueue, JobQueues, QueueCounts } from './types';

/** Stored job payload: the data plus the retries it started with, to tell the attempt number. */
interface Envelope<T> {
  d: T;
  r: number;
}

export interface BeeQueueSettings {
  redisUrl: string;
  prefix: string;
  /** A job whose worker stopped renewing its lease this long ago is given to another worker. */
  stallIntervalMs: number;
  onError(err: Error, queue: string): void;
}

/**
 * The Redis driver. A process that only adds jobs never becomes a worker; a worker renews a lease
 * on each active job, so a job whose worker was killed is taken up again after stallIntervalMs.
 */
export class BeeJobQueue<T = unknown> implements JobQueue<T> {
  private producer?: BeeQueue<Envelope<T>>;
  private worker?: BeeQueue<Envelope<T>>;

  constructor(
    readonly name: string,
    private readonly settings: BeeQueueSettings,
  ) {}

  private create(isWorker: boolean): BeeQueue<Envelope<T>> {
    const queue = new BeeQueue<Envelope<T>>(this.name, {
      redis: { url: this.settings.redisUrl } as BeeQueue.QueueSettings['redis'],
      prefix: `${this.settings.prefix}:bq`,
      isWorker,
      getEvents: false,
      sendEvents: false,
      storeJobs: false,
      activateDelayedJobs: isWorker,
      removeOnSuccess: true,
      stallInterval: this.settings.stallIntervalMs,
    });
    queue.on('error', (err) => this.settings.onError(err, this.name));
    return queue;
  }

  private get client(): BeeQueue<Envelope<T>> {
    return (this.producer ??= this.create(false));
  }

  async add(data: T, options: AddJobOptions = {}): Promise<string> {
    const retries = options.retries ?? 0;
    const job = this.client.createJob({ d: data, r: retries });
    if (options.jobId) job.setId(options.jobId);
    if (retries > 0) job.retries(retries).backoff('exponential', options.backoffMs ?? 1000);
    if (options.delayMs && options.delayMs > 0) job.delayUntil(Date.now() + options.delayMs);
    const saved = await job.save();
    // bee-queue answers a duplicate id with a null id and adds nothing.
    return saved.id ?? options.jobId!;
  }

  process(concurrency: number, handler: JobHandler<T>): void {
    if (this.worker) throw new Error(`queue ${this.name} already has a processor`);
    const worker = (this.worker = this.create(true));
    worker.process(concurrency, async (job) => {
      const { d, r } = job.data;
      return handler({ id: job.id, data: d, attempt: r - (job.options.retries ?? 0) + 1 });
    });
    worker.checkStalledJobs(this.settings.stallIntervalMs);
  }

  async counts(): Promise<QueueCounts> {
    const health = await this.client.checkHealth();
    return { waiting: health.waiting, active: health.active, delayed: health.delayed, failed: health.failed };
  }

  async close(timeoutMs = 5000): Promise<void> {
    await Promise.all([this.worker?.close(timeoutMs), this.producer?.close(timeoutMs)]);
  }
}

export class BeeJobQueues implements JobQueues {
  private readonly queues = new Map<string, BeeJobQueue<any>>();

  constructor(private readonly settings: BeeQueueSettings) {}

  get<T = unknown>(name: string): BeeJobQueue<T> {
    let queue = this.queues.get(name);
    if (!queue) this.queues.set(name, (queue = new BeeJobQueue<T>(name, this.settings)));
    return queue;
  }

  names(): string[] {
    return [...this.queues.keys()];
  }

  async closeAll(timeoutMs?: number): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close(timeoutMs)));
  }
}
