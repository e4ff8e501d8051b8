/** A job handed to a processor. `attempt` starts at 1. */
export interface Job<T = unknown> {
  id: string;
  data: T;
  attempt: number;
}

export interface AddJobOptions {
  /**
   * A job id that is waiting, delayed or active is not added again; once the job succeeded or
   * failed for good, the id can be added anew. Must contain a non-digit.
   */
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
  /**
   * Resolves with the job id, or with the existing job's id when jobId dedupes; fails with RedisAwayError
   * when Redis has not taken it within a few seconds (a caller whose work the database holds may go on:
   * queueSoon).
   */
  add(data: T, options?: AddJobOptions): Promise<string>;
  /** Starts processing in this process. Call once per queue. */
  process(concurrency: number, handler: JobHandler<T>): void;
  counts(): Promise<QueueCounts>;
  /**
   * Stops taking jobs and waits up to timeoutMs (default 5000) for active ones to finish, then
   * resolves anyway. On Redis a job still running then is given to another worker once it stalls.
   */
  close(timeoutMs?: number): Promise<void>;
}

/** Where drivers report retries, final failures, stalled jobs and connection errors. */
export interface QueueLogger {
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

/**
 * Both drivers number their own jobs 1, 2, 3...; a caller's all-digit id would collide with one of
 * those, and bee-queue would then silently drop the numbered job.
 */
export function assertJobId(jobId: string): void {
  if (jobId === '' || /^\d+$/.test(jobId)) throw new Error(`job id "${jobId}" must contain a non-digit`);
}

/** A queue's name and the type of its jobs' data, said once for producers and processors alike. */
export interface JobDefinition<T> {
  readonly queue: string;
  /** Never set: carries T so that `queues.get(definition)` is typed. */
  readonly data?: T;
}

const defined = new Set<string>();

export const defineJob = <T>(queue: string): JobDefinition<T> => {
  defined.add(queue);
  return { queue };
};

/** Every queue a loaded module defined: the enabled plugins' queues, whether this process opened them or not. */
export const definedQueueNames = (): string[] => [...defined];

export interface JobQueues {
  get<T>(definition: JobDefinition<T>): JobQueue<T>;
  /** By name, untyped: for code that handles every queue alike (metrics, tests). */
  get(name: string): JobQueue<unknown>;
  names(): string[];
  /** A queue's jobs by state without opening it in this process (an API process's metrics scrape). */
  countsOf(name: string): Promise<QueueCounts>;
  closeAll(timeoutMs?: number): Promise<void>;
}
