import type { Knex } from 'knex';
import { addMetricsByDay, dayOf, Metrics } from './daily-metrics';
import { engagementMoves } from './engagement-days';
import { mailMetricOf, METRIC } from './metric-names';

/**
 * What a message counter's increment adds to the day's figures: its mail metric, and a first open's hour
 * (the analytics rebuild adds the stored events' the same way).
 */
export function addMailMetrics(metrics: Metrics, counter: string, at: Date, n = 1): void {
  const metric = mailMetricOf(counter);
  if (!metric) return;
  metrics[metric] = (metrics[metric] ?? 0) + n;
  if (counter === 'unique_opened') {
    const hour = METRIC.opensInHour(at.getUTCHours());
    metrics[hour] = (metrics[hour] ?? 0) + n;
  }
}

/**
 * The analytics side of message counter increments made in one transaction: the organization's mail
 * figures of the day, first opens by hour, and the subscribers who engaged. `save` writes them in the
 * same transaction, one upsert per organization, so the figures are exactly the counters' increments.
 */
export class MailCounts {
  readonly day: string;
  private readonly metrics = new Map<number, Metrics>();
  private readonly engaged = new Map<number, number[]>();
  private readonly moves = new Map<number, Map<string, Metrics>>();

  constructor(private readonly at: Date) {
    this.day = dayOf(at);
  }

  /** A message counter (count_sent, unique_opened...) rose by n; a first open or click names its subscriber. */
  count(organizationId: number, counter: string, subscriberId?: number, n = 1): void {
    if (!mailMetricOf(counter) || !n) return;
    const metrics = this.metrics.get(organizationId) ?? this.metrics.set(organizationId, {}).get(organizationId)!;
    addMailMetrics(metrics, counter, this.at, n);
    if (subscriberId !== undefined && (counter === 'unique_opened' || counter === 'unique_clicked'))
      (this.engaged.get(organizationId) ?? this.engaged.set(organizationId, []).get(organizationId)!).push(
        subscriberId,
      );
  }

  /**
   * The engaged subscribers' previous engagement days (subscriber id to `last_engaged_day`), as the caller
   * read them, locked, while moving them to this.day (the mail-event ledger, through the subscribers'
   * `engage`); `save` writes the day counts' moves.
   */
  engagedBefore(lastDays: ReadonlyMap<number, string | null>): void {
    for (const [org, ids] of this.engaged)
      this.moves.set(
        org,
        engagementMoves(
          [...new Set(ids)].map((id) => {
            if (!lastDays.has(id)) throw new Error(`engagement day of subscriber ${id} not read`);
            return lastDays.get(id)!;
          }),
          this.day,
        ),
      );
  }

  async save(trx: Knex.Transaction): Promise<void> {
    const orgs = [...new Set([...this.metrics.keys(), ...this.engaged.keys()])].sort((a, b) => a - b);
    for (const org of orgs) {
      const byDay = this.moves.get(org) ?? new Map<string, Metrics>();
      const today = byDay.get(this.day) ?? byDay.set(this.day, {}).get(this.day)!;
      for (const [metric, n] of Object.entries(this.metrics.get(org) ?? {})) today[metric] = (today[metric] ?? 0) + n;
      await addMetricsByDay(trx, org, byDay);
    }
  }
}
