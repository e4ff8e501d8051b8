import { inject, injectable } from 'tsyringe';
import { JobQueues, SERVICES } from '@switchboard/core';
import { WEBHOOK_DELIVERIES_JOB } from './jobs';

/** Waking the dispatcher more often than this per process adds nothing: a run takes all that is due. */
const WAKE_EVERY_MS = 100;

/**
 * Wakes the delivery job: soon (at most one job per 100 ms per process, the last wake of a burst
 * never dropped), or later. A wake lost with Redis costs a delay, not a delivery: the scheduler's
 * task wakes the job while deliveries are due.
 */
@injectable()
export class WebhookWake {
  private last = 0;
  private trailing: NodeJS.Timeout | null = null;

  constructor(@inject(SERVICES.Queues) private readonly queues: JobQueues) {}

  now(): void {
    if (this.trailing) return;
    const wait = this.last + WAKE_EVERY_MS - Date.now();
    if (wait <= 0) return this.add();
    this.trailing = setTimeout(() => {
      this.trailing = null;
      this.add();
    }, wait);
    this.trailing.unref();
  }

  /**
   * A wake after `ms`. `reason` names it: one wake of a name waits at a time (the job id dedupes), and
   * a wake asked for from inside that same job is not swallowed by it when the names differ.
   */
  async later(ms: number, reason: string): Promise<void> {
    await this.queues.get(WEBHOOK_DELIVERIES_JOB).add({}, { jobId: `webhooks-${reason}`, delayMs: Math.max(1, ms) });
  }

  private add(): void {
    this.last = Date.now();
    this.queues
      .get(WEBHOOK_DELIVERIES_JOB)
      .add({})
      .catch(() => undefined);
  }
}
