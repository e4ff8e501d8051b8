import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, Clock, JobQueues, Locks, SERVICES, toDate, toInt } from '@switchboard/core';
import { CADENCE_MS, CheckType, plansOf, Tier, TIERS } from '../shared/plans';
import { exclusive } from '../shared/exclusive';
import { activeServers } from '../shared/active-servers';
import { CHECK_JOBS } from './jobs';

/** Servers read, and jobs handed to the queue, at a time. */
const PAGE = 2_000;
const ADDS_AT_ONCE = 200;
/**
 * How recent a dispatch must be to stand for the scheduler's own round: an external cron calling the route
 * at the same moment. Half a cadence, as for calls, let a call by hand between rounds (2.5 min after a
 * free round) cancel the next round: the free servers went 7 minutes unchecked (session 35).
 */
export const SCHEDULED_ROUND_RACE_MS = 15_000;

export interface Dispatch {
  dispatched: number;
  newServers: number;
  /** Tiers whose checks were dispatched less than half a cadence ago: not dispatched again. */
  recent: Tier[];
  /** Tiers another call was dispatching at the same time. */
  busy: Tier[];
}

interface TierDispatch {
  dispatched: number;
  newServers: number;
  seen: number;
  recent: boolean;
}

/**
 * `check/{type}`: a check job per server of the type's plans in organizations with an active
 * subscription (paused servers aside). A job's id names its server, so a server still waiting in the queue is never queued
 * twice; a tier dispatched less than half a cadence ago is left alone, so a repeated call does no double
 * work (the scheduler's round only within SCHEDULED_ROUND_RACE_MS of another); an overlapping call (a lock per tier, any process) answers at once that a dispatch is running.
 */
@injectable()
export class CheckDispatcher {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Queues) private readonly queues: JobQueues,
    @inject(SERVICES.Locks) private readonly locks: Locks,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  /** `scheduled`: the scheduler's round, which a dispatch between rounds does not cancel. */
  async dispatch(type: CheckType, options: { scheduled?: boolean } = {}): Promise<Dispatch> {
    const active = await this.knex('organizations')
      .where({ subscription_status: 'active' })
      .whereIn('selected_plan', plansOf(type))
      .first('id');
    if (!active) throw new AppError('PAYMENT_REQUIRED', 'No active subscriptions found');
    const result: Dispatch = { dispatched: 0, newServers: 0, recent: [], busy: [] };
    let seen = 0;
    for (const tier of type === 'all' ? TIERS : [type]) {
      const recentMs = options.scheduled ? SCHEDULED_ROUND_RACE_MS : CADENCE_MS[tier] / 2;
      const done = await exclusive(this.locks, `dispatch.${tier}`, () => this.dispatchTier(tier, recentMs));
      if (!done) result.busy.push(tier);
      else if (done.recent) result.recent.push(tier);
      else {
        result.dispatched += done.dispatched;
        result.newServers += done.newServers;
        seen += done.seen;
      }
    }
    if (!seen && !result.recent.length && !result.busy.length)
      throw new AppError('RESOURCE_NOT_FOUND', 'No servers found for active subscriptions');
    return result;
  }

  private async dispatchTier(tier: Tier, recentMs: number): Promise<TierDispatch> {
    const now = this.clock.now();
    const last = await this.knex('monitor_dispatches').where({ tier }).first('dispatched_at');
    const lastAt = toDate(last?.dispatched_at);
    if (lastAt && now.getTime() - lastAt.getTime() < recentMs)
      return { dispatched: 0, newServers: 0, seen: 0, recent: true };
    const result: TierDispatch = { dispatched: 0, newServers: 0, seen: 0, recent: false };
    const queue = this.queues.get(CHECK_JOBS[tier]);
    for (let after = 0; ;) {
      const rows: Array<Record<string, unknown>> = await activeServers(this.knex)
        .whereIn('o.selected_plan', plansOf(tier))
        .andWhere('s.id', '>', after)
        .orderBy('s.id')
        .limit(PAGE)
        .select('s.id', 's.last_checked_at');
      if (!rows.length) break;
      result.seen += rows.length;
      after = toInt(rows[rows.length - 1].id);
      for (let i = 0; i < rows.length; i += ADDS_AT_ONCE)
        await Promise.all(
          rows.slice(i, i + ADDS_AT_ONCE).map(async (r) => {
            const serverId = toInt(r.id);
            await queue.add({ serverId }, { jobId: `check.${serverId}` });
            result.dispatched++;
            if (r.last_checked_at === null) result.newServers++;
          }),
        );
    }
    if (result.seen)
      await this.knex('monitor_dispatches')
        .insert({ tier, dispatched_at: now })
        .onConflict('tier')
        .merge(['dispatched_at']);
    return result;
  }
}
