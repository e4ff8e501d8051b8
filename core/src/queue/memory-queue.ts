import { assertJobId } from './types';
import { QueueRegistry } from './queue-registry';
import type { AddJobOptions, JobHandler, JobQueue, QueueCounts, QueueLogger } from './types';

interface Entry<T> {
  id: string;
  data: T;
  attempt: number;
  retries: number;
  backoffMs: number;
}

/** The in-process driver of the embedded default: same semantics as bee-queue, jobs live in memory. */
export class MemoryQueue<T = unknown> implements JobQueue<T> {
  private readonly waiting: Entry<T>[] = [];
  private readonly delayed = new Map<string, NodeJS.Timeout>();
  private readonly active = new Map<string, Promise<void>>();
  private failed = 0;
  private sequence = 0;
  private handler?: JobHandler<T>;
  private concurrency = 1;
  private closed = false;

  constructor(
    readonly name: string,
    private readonly logger?: QueueLogger,
  ) {}

  async add(data: T, options: AddJobOptions = {}): Promise<string> {
    if (this.closed) throw new Error(`queue ${this.name} is closed`);
    if (options.jobId !== undefined) {
      assertJobId(options.jobId);
      if (this.has(options.jobId)) return options.jobId;
    }
    const id = options.jobId ?? String(++this.sequence);
    const entry: Entry<T> = {
      id,
      data: asStored(data),
      attempt: 1,
      retries: options.retries ?? 0,
      backoffMs: options.backoffMs ?? 1000,
    };
    if (options.delayMs && options.delayMs > 0) this.delay(entry, options.delayMs);
    else this.enqueue(entry);
    return id;
  }

  process(concurrency: number, handler: JobHandler<T>): void {
    if (this.handler) throw new Error(`queue ${this.name} already has a processor`);
    if (this.closed) throw new Error(`queue ${this.name} is closed`);
    this.handler = handler;
    this.concurrency = Math.max(1, Math.floor(concurrency));
    this.pump();
  }

  async counts(): Promise<QueueCounts> {
    return { waiting: this.waiting.length, active: this.active.size, delayed: this.delayed.size, failed: this.failed };
  }

  async close(timeoutMs = 5000): Promise<void> {
    this.closed = true;
    // Waiting and delayed jobs die with the process anyway; only running ones get to finish.
    for (const timer of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([Promise.allSettled([...this.active.values()]), timeout]);
    clearTimeout(timer);
  }

  private has(id: string): boolean {
    return this.active.has(id) || this.delayed.has(id) || this.waiting.some((e) => e.id === id);
  }

  private enqueue(entry: Entry<T>): void {
    this.waiting.push(entry);
    setImmediate(() => this.pump());
  }

  private delay(entry: Entry<T>, ms: number): void {
    const timer = setTimeout(() => {
      this.delayed.delete(entry.id);
      this.enqueue(entry);
    }, ms);
    this.delayed.set(entry.id, timer);
  }

  private pump(): void {
    while (this.handler && !this.closed && this.active.size < this.concurrency && this.waiting.length) {
      const entry = this.waiting.shift()!;
      this.active.set(entry.id, this.run(entry, this.handler));
    }
  }

  private async run(entry: Entry<T>, handler: JobHandler<T>): Promise<void> {
    // Lets pump() register the job as active before it can finish.
    await Promise.resolve();
    try {
      await handler({ id: entry.id, data: entry.data, attempt: entry.attempt });
      this.active.delete(entry.id);
    } catch (err) {
      this.active.delete(entry.id);
      const job = { queue: this.name, jobId: entry.id, attempt: entry.attempt, err };
      if (entry.attempt <= entry.retries && !this.closed) {
        this.logger?.warn(job, 'job failed; retrying');
        this.delay({ ...entry, attempt: entry.attempt + 1 }, entry.backoffMs * 2 ** (entry.attempt - 1));
      } else {
        this.failed += 1;
        this.logger?.error(job, 'job failed for good');
      }
    }
    setImmediate(() => this.pump());
  }
}

/** Redis keeps job data as JSON; so does this driver, so a Date arrives as a string in both. */
function asStored<T>(data: T): T {
  return data === undefined ? data : (JSON.parse(JSON.stringify(data)) as T);
}

export class MemoryJobQueues extends QueueRegistry<MemoryQueue<any>> {
  constructor(logger?: QueueLogger) {
    // In process: a queue never opened here holds no job.
    super(
      (name) => new MemoryQueue(name, logger),
      async () => ({ waiting: 0, active: 0, delayed: 0, failed: 0 }),
    );
  }
}
