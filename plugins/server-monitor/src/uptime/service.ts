import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, Clock, JobQueues, Locks, SERVICES, defineJob, toInt } from '@switchboard/core';
import { exclusive } from '../shared/exclusive';

export const UPTIME_JOB = defineJob<Record<string, never>>('servermonitor.uptime');

const HOUR = 3_600_000;
const WINDOWS = { uptime_24h: 24 * HOUR, uptime_7d: 7 * 24 * HOUR, uptime_30d: 30 * 24 * HOUR } as const;
/** Servers recomputed per query. */
const PAGE = 500;

const percent = (up: unknown, total: unknown) =>
  Number(total) > 0 ? Math.round((Number(up) / Number(total)) * 100_000) / 1000 : null;

/**
 * Uptime per server over 24 hours, 7 and 30 days: the share of its kept check results that were up,
 * stored on the server so reads cost nothing. A check marks its server stale; the job recomputes the
 * stale ones (the hourly `calculate`, or one server or all on request).
 */
@injectable()
export class UptimeService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Queues) private readonly queues: JobQueues,
    @inject(SERVICES.Locks) private readonly locks: Locks,
  ) {}

  /**
   * `calculate`: the job for the servers marked as needing it; their count. A server no check marks (paused,
   * or its organization's subscription not active) is marked once its figures are an hour old, until its
   * windows hold no result: they stood at what they were when its checks stopped (session 34).
   */
  async queueStale(): Promise<number> {
    await this.knex('monitor_servers')
      .where({ uptime_stale: false })
      .andWhere('uptime_at', '<', new Date(this.clock.now().getTime() - HOUR))
      .andWhere((q) => q.whereNotNull('uptime_24h').orWhereNotNull('uptime_7d').orWhereNotNull('uptime_30d'))
      .update({ uptime_stale: true });
    const [{ n }] = await this.knex('monitor_servers').where({ uptime_stale: true }).count({ n: '*' });
    await this.queue();
    return Number(n);
  }

  /** `calculate/server/{id}`: that server marked; its title. */
  async queueServer(serverId: number): Promise<string> {
    const server = await this.knex('monitor_servers').where({ id: serverId }).first('title');
    if (!server) throw new AppError('RESOURCE_NOT_FOUND', `Server with ID ${serverId} not found`);
    await this.knex('monitor_servers').where({ id: serverId }).update({ uptime_stale: true });
    await this.queue();
    return String(server.title);
  }

  /** `calculate/all`: every server marked; their count. */
  async queueAll(): Promise<number> {
    const marked = await this.knex('monitor_servers').update({ uptime_stale: true });
    await this.queue();
    return Number(marked);
  }

  private async queue(): Promise<void> {
    await this.queues.get(UPTIME_JOB).add({}, { jobId: 'uptime.stale' });
  }

  /** The job: every stale server recomputed, a page at a time; the number recomputed. */
  async recalculate(): Promise<number> {
    return (await exclusive(this.locks, 'uptime', () => this.recalculatePages())) ?? 0;
  }

  private async recalculatePages(): Promise<number> {
    let done = 0;
    for (;;) {
      const ids = (
        await this.knex('monitor_servers').where({ uptime_stale: true }).orderBy('id').limit(PAGE).pluck('id')
      ).map(toInt);
      if (!ids.length) return done;
      // Claimed first: a check landing meanwhile marks its server again for the next run.
      await this.knex('monitor_servers').whereIn('id', ids).update({ uptime_stale: false });
      const now = this.clock.now();
      const since = (ms: number) => new Date(now.getTime() - ms);
      const sums = Object.entries(WINDOWS).flatMap(([name, ms]) => [
        this.knex.raw(`sum(case when checked_at >= ? then 1 else 0 end) as ??`, [since(ms), `${name}_n`]),
        this.knex.raw(`sum(case when checked_at >= ? then up else 0 end) as ??`, [since(ms), `${name}_up`]),
      ]);
      const rows: Array<Record<string, unknown>> = await this.knex('monitor_check_results')
        .whereIn('server_id', ids)
        .andWhere('checked_at', '>=', since(WINDOWS.uptime_30d))
        .groupBy('server_id')
        .select('server_id', ...sums);
      const byServer = new Map(rows.map((r) => [toInt(r.server_id), r]));
      for (const id of ids) {
        const r = byServer.get(id);
        const figures = Object.fromEntries(
          Object.keys(WINDOWS).map((name) => [name, r ? percent(r[`${name}_up`], r[`${name}_n`]) : null]),
        );
        await this.knex('monitor_servers')
          .where({ id })
          .update({ ...figures, uptime_at: now });
      }
      done += ids.length;
    }
  }
}
