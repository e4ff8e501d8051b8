/** A job handed to a processor. `attempt` starts at 1. */
export interface Job<T = unknown> {
  id: string;
  data: T;
  attempt: number;
}

export interface AddJobOptions {
  /** A job id that already exists (waiting, delayed or active) is not added again. */
  jobId?: string;
  /** Run no earlier than this many milliseconds from now. */
  delayMs?: number;
  /** How many times a failed job is tried again (default 0). */
  retries?: number;
  /** Base delay of exponential backoff between retries, in ms (default 1000). */
  backoffMs?: number;
}

export interface QueueCounts {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
}

export type JobHandler<T = unknown> = (job: Job<T>) => Promise<unknown>;

/** One named queue; both drivers (bee-queue on Redis, in-process) behave the same. */
export interface JobQueue<T = unknown> {
  readonly name: string;
  /** Resolves with the job id, or with the existing job's id when jobId dedupes. */
  add(data: T, options?: AddJobOptions): Promise<string>;
  /** Starts processing in this process. Call once per queue. */
  process(concurrency: number, handler: JobHandler<T>): void;
  counts(): Promise<QueueCounts>;
  /** Stops taking jobs and waits up to timeoutMs for active ones to finish. */
  close(timeoutMs?: number): Promise<void>;
}

export interface JobQueues {
  get<T = unknown>(name: string): JobQueue<T>;
  names(): string[];
  closeAll(timeoutMs?: number): Promise<void>;
}
