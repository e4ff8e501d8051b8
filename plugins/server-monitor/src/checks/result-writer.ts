import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  Clock,
  GroupCommit,
  lockedOnMysql,
  Logger,
  SERVICES,
  toBool,
  toInt,
  transactionWithRetry,
} from '@switchboard/core';
import { AlertService } from '../alerts';
import { shownEndpoint } from '../shared/endpoints';
import type { CheckOutcome } from './http-check';
import { durationSince } from '../shared/durations';

/** What a check job knows of its server when it started. */
export interface CheckedServer {
  id: unknown;
  organization_id: unknown;
  title: unknown;
  endpoint: unknown;
  /** Its sealed secrets as checked; a new password or token since makes the check another URL's. */
  endpoint_secret?: unknown;
  status: unknown;
  is_up: unknown;
  down_alerted: unknown;
  state?: unknown;
  failing_since?: unknown;
}

interface Checked {
  server: CheckedServer;
  outcome: CheckOutcome;
}

/** Checks written per transaction at most, and transactions in flight per process. */
const RUN_CHECKS = 500;
const RUNS_AT_ONCE = 2;
const INSERT_CHUNK = 400;

const describe = (o: CheckOutcome) =>
  o.up ? `answered ${o.status} in ${o.responseMs} ms` : o.error ? `failed (${o.error})` : `answered ${o.status}`;

/**
 * Writes check outcomes: the result kept for uptime, the server's status and last_checked_at, a log
 * entry when its status changed, an alert for a confirmed outage (once) and for the recovery. Checks
 * finishing together are written together, one transaction for all (core GroupCommit): a worker running
 * hundreds of checks at once shares each commit among them.
 */
@injectable()
export class CheckResultWriter {
  private readonly runs = new GroupCommit<Checked, void>((batch) => this.writeTogether(batch), {
    maxWeight: RUN_CHECKS,
    concurrency: RUNS_AT_ONCE,
  });

  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(AlertService) private readonly alerts: AlertService,
    @inject(SERVICES.Logger) private readonly logger: Logger,
  ) {}

  write(server: CheckedServer, outcome: CheckOutcome): Promise<void> {
    return this.runs.submit({ server, outcome });
  }

  private async writeTogether(checked: Checked[]): Promise<void[]> {
    const now = this.clock.now();
    const alertIds = await transactionWithRetry(this.knex, async (trx) => {
      const batch = await this.stillChecked(trx, checked);
      const results = batch.map(({ server, outcome }) => ({
        server_id: toInt(server.id),
        checked_at: now,
        up: outcome.up,
        status: outcome.status,
        response_ms: outcome.responseMs,
        error: outcome.error,
      }));
      const logs = batch
        .filter(({ server, outcome }) => (server.status === null ? null : String(server.status)) !== outcome.status)
        .map(({ server, outcome }) => ({
          server_id: toInt(server.id),
          original_status: server.status === null ? null : String(server.status),
          updated_status: outcome.status,
          note: `${shownEndpoint(String(server.endpoint))} ${describe(outcome)}`.slice(0, 1024),
          created_at: now,
        }));
      for (const [table, rows] of [
        ['monitor_check_results', results],
        ['monitor_logs', logs],
      ] as const)
        for (let i = 0; i < rows.length; i += INSERT_CHUNK) await trx(table).insert(rows.slice(i, i + INSERT_CHUNK));
      const raised: number[] = [];
      for (const { server, outcome } of batch) raised.push(...(await this.applyTo(trx, server, outcome, now)));
      return raised;
    });
    // Committed: a failure now must not run the checks again (GroupCommit would, and raise their alerts
    // twice). An alert not queued stays pending, and the alert-requeue sweep queues it within minutes.
    await this.alerts
      .queue(alertIds)
      .catch((err: unknown) =>
        this.logger.warn({ err, alerts: alertIds.length }, 'server-monitor alerts not queued: the requeue sweep will'),
      );
    return checked.map(() => undefined);
  }

  /**
   * The checks whose server is as it was when checked, with its row as it is now (read locked on MySQL, in
   * id order): one paused, deleted or given another endpoint (or other secrets in it) meanwhile is not written (paused means no
   * alert; the new endpoint is checked in its round), and the status, state and alert flag are the ones
   * stored now, not the job's copy from before the check (another check may have changed them).
   */
  private async stillChecked(trx: Knex.Transaction, checked: Checked[]): Promise<Checked[]> {
    const ids = [...new Set(checked.map((c) => toInt(c.server.id)))].sort((a, b) => a - b);
    const query = trx('monitor_servers')
      .whereIn('id', ids)
      .orderBy('id')
      .select(
        'id',
        'organization_id',
        'title',
        'endpoint',
        'endpoint_secret',
        'status',
        'is_up',
        'down_alerted',
        'state',
        'failing_since',
      );
    const rows = (await lockedOnMysql(query)) as CheckedServer[];
    const current = new Map(rows.map((row) => [toInt(row.id), row]));
    return checked.flatMap(({ server, outcome }) => {
      const now = current.get(toInt(server.id));
      if (!now || now.state === 'paused' || now.endpoint !== server.endpoint) return [];
      // The endpoint shown alike, its password or token changed meanwhile (written sealed anew).
      if (server.endpoint_secret !== undefined && (now.endpoint_secret ?? null) !== (server.endpoint_secret ?? null))
        return [];
      return [{ server: now, outcome }];
    });
  }

  /** The server's row, and the alert its outcome calls for. */
  private async applyTo(trx: Knex.Transaction, server: CheckedServer, outcome: CheckOutcome, now: Date) {
    const id = toInt(server.id);
    const title = String(server.title);
    const wasUp = server.is_up === null ? null : toBool(server.is_up);
    const alerted = toBool(server.down_alerted);
    const changes: Record<string, unknown> = {
      status: outcome.status,
      is_up: outcome.up,
      // A server paused while its check ran stays paused.
      state: trx.raw("CASE WHEN ?? = 'paused' THEN 'paused' ELSE ? END", ['state', outcome.up ? 'up' : 'down']),
      response_ms: outcome.responseMs,
      last_checked_at: now,
      uptime_stale: true,
      updated_at: now,
    };
    if (outcome.up) changes.failing_since = null;
    else if (wasUp !== false) changes.failing_since = now;
    let alertIds: number[] = [];
    const about = `${title} (${shownEndpoint(String(server.endpoint))})`;
    if (!outcome.up && !alerted) {
      changes.down_alerted = true;
      alertIds = await this.alerts.raise(trx, toInt(server.organization_id), {
        kind: 'server-down',
        serverId: id,
        subject: `DOWN: ${title}`,
        text: `${about} is down: it ${describe(outcome)} at ${now.toISOString()}.`,
      });
    } else if (outcome.up && alerted) {
      changes.down_alerted = false;
      alertIds = await this.alerts.raise(trx, toInt(server.organization_id), {
        kind: 'server-up',
        serverId: id,
        subject: `UP again: ${title}`,
        text: `${about} is up again: it ${describe(outcome)} at ${now.toISOString()}${downFor(server, now)}.`,
      });
    }
    await trx('monitor_servers').where({ id }).update(changes);
    return alertIds;
  }
}

/** How long the outage a recovery ends lasted, as the alert says it: ", after 12 min down (since ...)". */
function downFor(server: CheckedServer, now: Date): string {
  if (server.failing_since === null || server.failing_since === undefined) return '';
  const since = new Date(server.failing_since as string | number | Date);
  return Number.isNaN(since.getTime())
    ? ''
    : `, after ${durationSince(since, now)} down (since ${since.toISOString()})`;
}
