import type { JobQueue, JobQueues } from './types';

/** The queues of one process by name, made on first use by the driver's factory. */
export class QueueRegistry<Q extends JobQueue<any>> implements JobQueues {
  private readonly queues = new Map<string, Q>();

  constructor(private readonly make: (name: string) => Q) {}

  get<T = unknown>(name: string): JobQueue<T> {
    let queue = this.queues.get(name);
    if (!queue) this.queues.set(name, (queue = this.make(name)));
    return queue as JobQueue<T>;
  }

  names(): string[] {
    return [...this.queues.keys()];
  }

  async closeAll(timeoutMs?: number): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close(timeoutMs)));
  }
}
