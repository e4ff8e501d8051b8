import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, SERVICES, toDate, toInt } from '@switchboard/core';
import { CHECK_OPTIONS, CheckOptions } from '../checks';
import { activeServers } from '../shared/active-servers';
import { CADENCE_MS, plansOf } from '../shared/plans';

/** The window the check rate is measured over. */
const WINDOW_MS = 10 * 60_000;
const MIN_SPAN_MS = 60_000;

export interface Capacity {
  servers: { premium: number; free: number };
  /** Checks per second both SLAs need: premium servers every 60 s, free every 300 s. */
  required_checks_per_second: number;
  /** Checks done per second over the last 10 minutes, or since the first check in them (a minute at least). */
  measured_checks_per_second: number;
  average_response_ms: number | null;
  /** What one worker process can do: its concurrency over the average check time. */
  checks_per_second_per_worker: number | null;
  workers_needed: number | null;
  meets_sla: boolean;
  /** Servers added within the window: their checks are not all in the measure yet (it may read short). */
  servers_added_in_window: number;
}

/**
 * `servermonitor:check-capacity`: whether the measured check rate covers both SLAs for today's servers,
 * and how many worker processes they need (each runs `checks.concurrency` checks at once).
 */
@injectable()
export class CapacityService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(CHECK_OPTIONS) private readonly options: CheckOptions,
  ) {}

  async measure(): Promise<Capacity> {
    const count = async (tier: 'premium' | 'free') =>
      toInt((await activeServers(this.knex).whereIn('o.selected_plan', plansOf(tier)).count({ n: '*' }))[0].n);
    const servers = { premium: await count('premium'), free: await count('free') };
    const since = new Date(this.clock.now().getTime() - WINDOW_MS);
    const added = toInt((await activeServers(this.knex).where('s.created_at', '>=', since).count({ n: '*' }))[0].n);
    const required = servers.premium / (CADENCE_MS.premium / 1000) + servers.free / (CADENCE_MS.free / 1000);
    const [row] = await this.knex('monitor_check_results')
      .where('checked_at', '>=', since)
      .select(
        this.knex.raw('count(*) as n'),
        // A check that timed out has no response time but held its place for the whole limit.
        this.knex.raw("avg(coalesce(response_ms, case when status = 'timeout' then ? end)) as ms", [
          this.options.timeoutMs,
        ]),
        this.knex.raw('min(checked_at) as first'),
      );
    // Since checking began, when that is within the window (a new deployment), but over a minute at least.
    const first = toDate(row.first);
    const span = first ? Math.max(MIN_SPAN_MS, this.clock.now().getTime() - first.getTime()) : WINDOW_MS;
    const measured = toInt(row.n) / (Math.min(span, WINDOW_MS) / 1000);
    const averageMs = row.ms === null || row.ms === undefined ? null : Math.round(Number(row.ms));
    const perWorker = averageMs ? (this.options.concurrency * 1000) / Math.max(averageMs, 1) : null;
    const round = (n: number) => Math.round(n * 100) / 100;
    return {
      servers,
      required_checks_per_second: round(required),
      measured_checks_per_second: round(measured),
      average_response_ms: averageMs,
      checks_per_second_per_worker: perWorker === null ? null : round(perWorker),
      workers_needed: perWorker === null ? null : Math.max(1, Math.ceil(required / perWorker)),
      // Checks come on their cadence, so the rate measured only reaches the rate needed: 5 % short is
      // rounding and servers added within the window, not a worker falling behind.
      meets_sla: measured >= required * 0.95,
      servers_added_in_window: added,
    };
  }
}
