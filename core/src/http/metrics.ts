import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { definedQueueNames } from '../queue/types';
import type { JobQueues } from '../queue/types';

/** One registry per engine, so several engines in one test process do not collide. */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'switchboard_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'switchboard_http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  constructor(queues: JobQueues) {
    collectDefaultMetrics({ register: this.registry, prefix: 'switchboard_' });
    new Gauge({
      name: 'switchboard_queue_jobs',
      help: 'Jobs per queue and state',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        // Every queue the enabled plugins define, whether this process opened it or not (an API process
        // opens only those it adds to). All at once: Redis away, each gives up after 2 s, and their gauges
        // are left out; the rest is served.
        const names = [...new Set([...definedQueueNames(), ...queues.names()])].sort();
        const all = await Promise.all(names.map((name) => queues.countsOf(name).catch(() => null)));
        names.forEach((name, i) => {
          for (const [state, n] of Object.entries(all[i] ?? {})) this.set({ queue: name, state }, n);
        });
      },
    });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }
}
