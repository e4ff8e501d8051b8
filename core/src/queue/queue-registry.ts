import type { JobDefinition, JobQueue, JobQueues, QueueCounts } from './types';

/** The queues of one process by name, made on first use by the driver's factory. */
export class QueueRegistry<Q extends JobQueue<any>> implements JobQueues {
  private readonly queues = new Map<string, Q>();

  constructor(
    private readonly make: (name: string) => Q,
    /** The counts of a queue this process has not opened, read without opening it (else it is opened). */
    private readonly unopenedCounts?: (name: string) => Promise<QueueCounts>,
  ) {}

  get<T>(definition: JobDefinition<T>): JobQueue<T>;
  get(name: string): JobQueue<unknown>;
  get(nameOrDefinition: string | JobDefinition<unknown>): JobQueue<unknown> {
    const name = typeof nameOrDefinition === 'string' ? nameOrDefinition : nameOrDefinition.queue;
    let queue = this.queues.get(name);
    if (!queue) this.queues.set(name, (queue = this.make(name)));
    return queue;
  }

  names(): string[] {
    return [...this.queues.keys()];
  }

  countsOf(name: string): Promise<QueueCounts> {
    const queue = this.queues.get(name);
    if (queue || !this.unopenedCounts) return (queue ?? this.get(name)).counts();
    return this.unopenedCounts(name);
  }

  async closeAll(timeoutMs?: number): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close(timeoutMs)));
  }
}
