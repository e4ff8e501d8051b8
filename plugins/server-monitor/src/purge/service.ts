import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, Clock, Locks, Plan, SERVICES, toInt } from '@switchboard/core';
import { exclusive } from '../shared/exclusive';
import { RETENTION_DAYS } from '../shared/plans';

/** Rows deleted per statement: short statements, so checks writing meanwhile never wait long. */
const BATCH = 2_000;
const DAY = 86_400_000;
/** SLA samples are kept this long (the dashboard shows the last hours). */
const SAMPLE_DAYS = 7;

export interface Purge {
  organizations: number;
  logs: number;
  results: number;
  busy: boolean;
}

/**
 * Deletes logs and check results older than each organization's plan retention, in small batches by
 * id (Uptime Kuma's one-statement cleanup locked its tables and showed false downtime).
 */
@injectable()
export class PurgeService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Locks) private readonly locks: Locks,
  ) {}

  async purge(organizationId?: number): Promise<Purge> {
    const orgs = this.knex('organizations').orderBy('id').select('id', 'selected_plan');
    const targets: Array<{ id: unknown; selected_plan: unknown }> =
      organizationId === undefined ? await orgs : await orgs.where({ id: organizationId });
    if (organizationId !== undefined && !targets.length)
      throw new AppError('RESOURCE_NOT_FOUND', `Organization with ID ${organizationId} not found`);
    const purged = await exclusive(this.locks, 'purge', async () => {
      const total: Purge = { organizations: 0, logs: 0, results: 0, busy: false };
      const now = this.clock.now().getTime();
      for (const org of targets) {
        const cutoff = new Date(now - (RETENTION_DAYS[org.selected_plan as Plan] ?? RETENTION_DAYS.free) * DAY);
        const logs = await this.purgeTable('monitor_logs', 'created_at', toInt(org.id), cutoff);
        const results = await this.purgeTable('monitor_check_results', 'checked_at', toInt(org.id), cutoff);
        total.organizations++;
        total.logs += logs;
        total.results += results;
      }
      if (organizationId === undefined)
        await this.knex('monitor_sla_samples')
          .where('sampled_at', '<', new Date(now - SAMPLE_DAYS * DAY))
          .delete();
      return total;
    });
    return purged ?? { organizations: 0, logs: 0, results: 0, busy: true };
  }

  private async purgeTable(table: string, column: string, organizationId: number, cutoff: Date): Promise<number> {
    let deleted = 0;
    for (;;) {
      const ids = await this.knex(`${table} as t`)
        .join('monitor_servers as s', 's.id', 't.server_id')
        .where('s.organization_id', organizationId)
        .andWhere(`t.${column}`, '<', cutoff)
        .limit(BATCH)
        .pluck('t.id');
      if (!ids.length) return deleted;
      deleted += await this.knex(table).whereIn('id', ids).delete();
      // Let other work in between batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
}
