import type { JobDefinition, JobQueue, JobQueues } from './types';

/** The queues of one process by name, made on first use by the driver's factory. */
export class QueueRegistry<Q extends JobQueue<any>> implements JobQueues {
  private readonly queues = new Map<string, Q>();

  constructor(private readonly make: (name: string) => Q) {}

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

  async closeAll(timeoutMs?: number): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close(timeoutMs)));
  }
}
