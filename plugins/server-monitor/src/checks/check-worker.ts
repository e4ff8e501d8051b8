import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, SERVICES, toBool, toInt, transactionWithRetry } from '@switchboard/core';
import { AlertService } from '../alerts/alert-service';
import { CHECK_OPTIONS, CheckOptions } from './options';
import { CheckOutcome, HttpChecker } from './http-check';

const describe = (o: CheckOutcome) =>
  o.up ? `answered ${o.status} in ${o.responseMs} ms` : o.error ? `failed (${o.error})` : `answered ${o.status}`;

/**
 * A check job: one GET of the server's endpoint. A new failure is confirmed by a second try a moment
 * later before it counts (no alert for one lost packet). The result is kept for uptime, the server's
 * status and last_checked_at set, a change of status logged, and a confirmed outage alerted once, with
 * a recovery notice when the server answers again.
 */
@injectable()
export class CheckWorker {
  readonly checker: HttpChecker;

  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(AlertService) private readonly alerts: AlertService,
    @inject(CHECK_OPTIONS) private readonly options: CheckOptions,
  ) {
    this.checker = new HttpChecker({ timeoutMs: options.timeoutMs, maxRedirections: options.maxRedirections });
  }

  async run(serverId: number): Promise<CheckOutcome | null> {
    const server = await this.knex('monitor_servers')
      .where({ id: serverId })
      .first('id', 'organization_id', 'title', 'endpoint', 'status', 'is_up', 'down_alerted');
    if (!server) return null;
    const knownDown = server.is_up !== null && !toBool(server.is_up);
    let outcome = await this.checker.check(String(server.endpoint));
    if (!outcome.up && !knownDown) {
      await new Promise((resolve) => setTimeout(resolve, this.options.confirmDelayMs));
      outcome = await this.checker.check(String(server.endpoint));
    }
    await this.record(server, outcome);
    return outcome;
  }

  private async record(server: Record<string, unknown>, outcome: CheckOutcome): Promise<void> {
    const now = this.clock.now();
    const id = toInt(server.id);
    const organizationId = toInt(server.organization_id);
    const title = String(server.title);
    const before = server.status === null ? null : String(server.status);
    const wasUp = server.is_up === null ? null : toBool(server.is_up);
    const alerted = toBool(server.down_alerted);
    const queued = await transactionWithRetry(this.knex, async (trx) => {
      await trx('monitor_check_results').insert({
        server_id: id,
        checked_at: now,
        up: outcome.up,
        status: outcome.status,
        response_ms: outcome.responseMs,
        error: outcome.error,
      });
      const changes: Record<string, unknown> = {
        status: outcome.status,
        is_up: outcome.up,
        response_ms: outcome.responseMs,
        last_checked_at: now,
        uptime_stale: true,
        updated_at: now,
      };
      if (outcome.up) changes.failing_since = null;
      else if (wasUp !== false) changes.failing_since = now;
      if (before !== outcome.status)
        await trx('monitor_logs').insert({
          server_id: id,
          original_status: before,
          updated_status: outcome.status,
          note: `${String(server.endpoint)} ${describe(outcome)}`.slice(0, 1024),
          created_at: now,
        });
      let alertIds: number[] = [];
      if (!outcome.up && !alerted) {
        changes.down_alerted = true;
        alertIds = await this.alerts.raise(trx, organizationId, {
          kind: 'server-down',
          serverId: id,
          subject: `DOWN: ${title}`,
          text: `${title} (${String(server.endpoint)}) is down: it ${describe(outcome)} at ${now.toISOString()}.`,
        });
      } else if (outcome.up && alerted) {
        changes.down_alerted = false;
        alertIds = await this.alerts.raise(trx, organizationId, {
          kind: 'server-up',
          serverId: id,
          subject: `UP again: ${title}`,
          text: `${title} (${String(server.endpoint)}) is up again: it ${describe(outcome)} at ${now.toISOString()}.`,
        });
      }
      await trx('monitor_servers').where({ id }).update(changes);
      return alertIds;
    });
    await this.alerts.queue(queued);
  }
}
