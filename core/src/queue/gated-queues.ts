import type { JobDefinition, JobQueue, JobQueues } from './types';

/** Something jobs wait on before they run (SchemaGate). */
export interface JobGate {
  open(): Promise<void>;
}

/**
 * The queues as the plugins' processors see them: every job first waits for the gate (the database having
 * this release's migrations). Producers see the queues as they are.
 */
export function gatedQueues(queues: JobQueues, gate: JobGate): JobQueues {
  const gated = <T>(queue: JobQueue<T>): JobQueue<T> => ({
    name: queue.name,
    add: (data, options) => queue.add(data, options),
    counts: () => queue.counts(),
    close: (timeoutMs) => queue.close(timeoutMs),
    process: (concurrency, handler) =>
      queue.process(concurrency, async (job) => {
        await gate.open();
        return handler(job);
      }),
  });
  function get<T>(definition: JobDefinition<T>): JobQueue<T>;
  function get(name: string): JobQueue<unknown>;
  function get(nameOrDefinition: string | JobDefinition<unknown>): JobQueue<unknown> {
    return gated(queues.get(nameOrDefinition as string));
  }
  return {
    get,
    names: () => queues.names(),
    countsOf: (name) => queues.countsOf(name),
    closeAll: (timeoutMs) => queues.closeAll(timeoutMs),
  };
}
