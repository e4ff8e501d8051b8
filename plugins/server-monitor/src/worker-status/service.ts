import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, JobQueues, SERVICES, toInt, toIsoRequired } from '@switchboard/core';
import { CHECK_JOBS } from '../checks';
import { activeServers } from '../shared/active-servers';
import { CADENCE_MS, plansOf, Tier, TIERS } from '../shared/plans';

/** A check may land this long after its cadence (dispatch and queue time) and still count as on time. */
export const SLA_SLACK_MS = 15_000;
/** Healthy when every tier is at least this compliant; warning down to WARNING_BELOW; critical below. */
export const HEALTHY_FROM = 99;
export const WARNING_FROM = 90;
const HOUR = 3_600_000;

export interface Compliance {
  percentage: number;
  checked: number;
  total: number;
}

export interface WorkerStatus {
  status: 'healthy' | 'warning' | 'critical';
  timestamp: string;
  sla_compliance: Record<Tier, Compliance>;
  /** null: the queues could not be read (the dashboard's status, which says so rather than failing). */
  queue_status: Record<Tier, number | null>;
  recent_breaches: number;
}

export interface Sample {
  sampled_at: string;
  tier: Tier;
  percentage: number;
}

const percentOf = (checked: number, total: number) => (total ? Math.floor((checked / total) * 10_000) / 100 : 100);

/**
 * Worker health from what was measured: the share of each tier's servers (active organizations; not those
 * added within their cadence and not checked yet) checked within their cadence plus slack, the check
 * queues' lengths, and the minutes of the last hour whose sample fell below the healthy line (a breach).
 * The scheduler samples every minute.
 */
@injectable()
export class WorkerStatusService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Queues) private readonly queues: JobQueues,
  ) {}

  async compliance(now = this.clock.now()): Promise<Record<Tier, Compliance>> {
    const out = {} as Record<Tier, Compliance>;
    for (const tier of TIERS) {
      const since = new Date(now.getTime() - CADENCE_MS[tier] - SLA_SLACK_MS);
      // A server added, resumed or changed by a person within its cadence and not checked since is not late:
      // its next round is still to come (a check writes both times alike; a resumed server counted late until
      // checked, and a few resumed at once read "critical").
      const [row] = await activeServers(this.knex)
        .whereIn('o.selected_plan', plansOf(tier))
        .whereNot((q) =>
          q
            .where('s.updated_at', '>=', since)
            .andWhere((w) =>
              w.whereNull('s.last_checked_at').orWhereRaw('?? < ??', ['s.last_checked_at', 's.updated_at']),
            ),
        )
        .select(
          this.knex.raw('count(*) as total'),
          this.knex.raw('sum(case when s.last_checked_at >= ? then 1 else 0 end) as checked', [since]),
        );
      const total = toInt(row.total);
      const checked = toInt(row.checked ?? 0);
      out[tier] = { percentage: percentOf(checked, total), checked, total };
    }
    return out;
  }

  /**
   * The status; queues that cannot be read (Redis away: their counts give up after 2 s) fail it, or with
   * `unknownQueues` (the on-call dashboard, needed most then) leave their lengths null.
   */
  async status(options: { unknownQueues?: boolean } = {}): Promise<WorkerStatus> {
    const now = this.clock.now();
    const sla = await this.compliance(now);
    const lengths = await Promise.all(
      TIERS.map((tier) =>
        this.queues
          .get(CHECK_JOBS[tier])
          .counts()
          .then(
            (c) => c.waiting + c.active + c.delayed,
            (err: unknown) => {
              if (!options.unknownQueues) throw err;
              return null;
            },
          ),
      ),
    );
    const queue_status = Object.fromEntries(TIERS.map((tier, i) => [tier, lengths[i]])) as Record<Tier, number | null>;
    const [{ n }] = await this.knex('monitor_sla_samples')
      .where('sampled_at', '>=', new Date(now.getTime() - HOUR))
      .andWhereRaw('checked * 100 < total * ?', [HEALTHY_FROM])
      // Minutes, not samples: both plans below in one minute is one minute of breach (it counted two).
      .countDistinct({ n: 'sampled_at' });
    const lowest = Math.min(...TIERS.map((t) => sla[t].percentage));
    return {
      status: lowest >= HEALTHY_FROM ? 'healthy' : lowest >= WARNING_FROM ? 'warning' : 'critical',
      timestamp: now.toISOString(),
      sla_compliance: sla,
      queue_status,
      recent_breaches: Number(n),
    };
  }

  /** The minute's sample (one per minute and tier, whichever process takes it first). */
  async sample(): Promise<void> {
    const now = this.clock.now();
    const minute = new Date(now.getTime() - (now.getTime() % 60_000));
    const sla = await this.compliance(now);
    await this.knex('monitor_sla_samples')
      .insert(TIERS.map((tier) => ({ sampled_at: minute, tier, checked: sla[tier].checked, total: sla[tier].total })))
      .onConflict(['sampled_at', 'tier'])
      .ignore();
  }

  /** The samples of the last `hours`, oldest first. */
  async samples(hours: number): Promise<Sample[]> {
    const now = this.clock.now();
    const rows: Array<Record<string, unknown>> = await this.knex('monitor_sla_samples')
      .where('sampled_at', '>=', new Date(now.getTime() - hours * HOUR))
      .orderBy('sampled_at')
      .select('sampled_at', 'tier', 'checked', 'total');
    return rows.map((r) => ({
      sampled_at: toIsoRequired(r.sampled_at),
      tier: r.tier as Tier,
      percentage: percentOf(toInt(r.checked), toInt(r.total)),
    }));
  }
}
