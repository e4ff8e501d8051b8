import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, Clock, JobQueues, Locks, SERVICES, toDate, toInt } from '@switchboard/core';
import { CADENCE_MS, CheckType, plansOf, tierOf, Tier, TIERS } from '../shared/plans';
import { exclusive } from '../shared/exclusive';
import { CHECK_JOBS } from './jobs';

/** Servers read, and jobs handed to the queue, at a time. */
const PAGE = 2_000;
const ADDS_AT_ONCE = 200;

export interface Dispatch {
  dispatched: number;
  newServers: number;
  /** Checked within this cadence already, or still queued from a call before: not queued again. */
  alreadyCurrent: number;
  /** Another call was dispatching the same type. */
  busy: boolean;
}

/**
 * `check/{type}`: a check job per server of the type's plans in organizations with an active
 * subscription. A job's id names its server and cadence period, and a server checked within the
 * current period is left out, so repeated or overlapping calls do no double work.
 */
@injectable()
export class CheckDispatcher {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Queues) private readonly queues: JobQueues,
    @inject(SERVICES.Locks) private readonly locks: Locks,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async dispatch(type: CheckType): Promise<Dispatch> {
    const plans = plansOf(type);
    const active = await this.knex('organizations')
      .where({ subscription_status: 'active' })
      .whereIn('selected_plan', plans)
      .first('id');
    if (!active) throw new AppError('PAYMENT_REQUIRED', 'No active subscriptions found');
    const found = await exclusive(this.locks, `dispatch.${type}`, () => this.queueAll(plans));
    return found ?? { dispatched: 0, newServers: 0, alreadyCurrent: 0, busy: true };
  }

  private async queueAll(plans: string[]): Promise<Dispatch> {
    const now = this.clock.now().getTime();
    const periodOf = (tier: Tier) => Math.floor(now / CADENCE_MS[tier]);
    const periodStart = Object.fromEntries(TIERS.map((t) => [t, new Date(periodOf(t) * CADENCE_MS[t])]));
    const result: Dispatch = { dispatched: 0, newServers: 0, alreadyCurrent: 0, busy: false };
    let seen = 0;
    for (let after = 0; ;) {
      const rows: Array<Record<string, unknown>> = await this.knex('monitor_servers as s')
        .join('organizations as o', 'o.id', 's.organization_id')
        .where('o.subscription_status', 'active')
        .whereIn('o.selected_plan', plans)
        .andWhere('s.id', '>', after)
        .orderBy('s.id')
        .limit(PAGE)
        .select('s.id', 's.last_checked_at', 'o.selected_plan');
      if (!rows.length) break;
      seen += rows.length;
      after = toInt(rows[rows.length - 1].id);
      const due = rows.filter((r) => {
        const last = toDate(r.last_checked_at);
        const current = last !== null && last >= periodStart[tierOf(String(r.selected_plan))];
        if (current) result.alreadyCurrent++;
        return !current;
      });
      for (let i = 0; i < due.length; i += ADDS_AT_ONCE)
        await Promise.all(
          due.slice(i, i + ADDS_AT_ONCE).map(async (r) => {
            const tier = tierOf(String(r.selected_plan));
            const serverId = toInt(r.id);
            await this.queues.get(CHECK_JOBS[tier]).add({ serverId }, { jobId: `check.${serverId}.${periodOf(tier)}` });
            result.dispatched++;
            if (r.last_checked_at === null) result.newServers++;
          }),
        );
    }
    if (!seen) throw new AppError('RESOURCE_NOT_FOUND', 'No servers found for active subscriptions');
    return result;
  }
}
