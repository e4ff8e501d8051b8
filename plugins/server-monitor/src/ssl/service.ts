import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, defineJob, JobQueues, Locks, SERVICES, toDate, toInt, transactionWithRetry } from '@switchboard/core';
import { AlertService } from '../alerts';
import { activeServers } from '../shared/active-servers';
import { exclusive } from '../shared/exclusive';
import { MONITOR_ADDRESSES, MonitorAddresses } from '../shared/addresses';
import { shownEndpoint } from '../shared/endpoints';
import { readCertificate } from './read-certificate';

export const SSL_JOB = defineJob<{ after: number }>('servermonitor.ssl');

export interface SslOptions {
  /** Certificates read at once. */
  concurrency: number;
  /** How long a request to check/ssl reads before handing the rest to a worker. */
  budgetMs: number;
  timeoutMs: number;
}

export const DEFAULT_SSL_OPTIONS: SslOptions = { concurrency: 50, budgetMs: 20_000, timeoutMs: 10_000 };

/** Plugin options `ssl` in config/switchboard.json. */
export const sslOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    concurrency: { type: 'integer', minimum: 1, maximum: 1_000 },
    budgetMs: { type: 'integer', minimum: 1, maximum: 600_000 },
    timeoutMs: { type: 'integer', minimum: 100, maximum: 60_000 },
  },
} as const;
export const SSL_OPTIONS = 'servermonitor.SslOptions';
const DAY = 86_400_000;
const PAGE = 500;

export interface SslRun {
  checked: number;
  expiringSoon: number;
  expired: number;
  /** Servers left to a worker when the time budget ran out. */
  handedOver: boolean;
  busy: boolean;
}

type Level = 'soon' | 'expired' | null;

/**
 * `check/ssl`: the certificate of every https server of an active organization, read with bounded
 * concurrency; its expiry and issuer stored, and each threshold crossed (within the organization's days,
 * then expired) alerted once. A request reads for at most `budgetMs` and hands the rest to a worker
 * job, so the call answers in bounded time at any number of servers; its counts are of what it read.
 */
@injectable()
export class SslService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Locks) private readonly locks: Locks,
    @inject(SERVICES.Queues) private readonly queues: JobQueues,
    @inject(AlertService) private readonly alerts: AlertService,
    @inject(SSL_OPTIONS) private readonly options: SslOptions,
    @inject(MONITOR_ADDRESSES) private readonly addresses: MonitorAddresses,
  ) {}

  check(after = 0, budgetMs = this.options.budgetMs): Promise<SslRun> {
    return exclusive(this.locks, 'ssl', () => this.run(after, budgetMs)).then(
      (run) => run ?? { checked: 0, expiringSoon: 0, expired: 0, handedOver: false, busy: true },
    );
  }

  private async run(after: number, budgetMs: number): Promise<SslRun> {
    const deadline = performance.now() + budgetMs;
    const run: SslRun = { checked: 0, expiringSoon: 0, expired: 0, handedOver: false, busy: false };
    for (let last = after; ;) {
      if (performance.now() >= deadline) {
        await this.queues.get(SSL_JOB).add({ after: last }, { jobId: `ssl.${last}`, retries: 10, backoffMs: 2_000 });
        run.handedOver = true;
        return run;
      }
      const servers: Array<Record<string, unknown>> = await activeServers(this.knex)
        .leftJoin('monitor_notification_settings as n', 'n.organization_id', 's.organization_id')
        .leftJoin('monitor_certificates as c', 'c.server_id', 's.id')
        .where('s.endpoint', 'like', 'https://%')
        .andWhere('s.id', '>', last)
        .orderBy('s.id')
        .limit(PAGE)
        .select('s.id', 's.organization_id', 's.title', 's.endpoint', 'n.ssl_expiry_days', 'c.alerted', 'c.valid_to');
      if (!servers.length) return run;
      let next = 0;
      const done = new Set<number>();
      const worker = async () => {
        while (performance.now() < deadline && next < servers.length) {
          const server = servers[next++];
          const level = await this.checkOne(server);
          run.checked++;
          if (level === 'soon') run.expiringSoon++;
          if (level === 'expired') run.expired++;
          done.add(toInt(server.id));
        }
      };
      await Promise.all(Array.from({ length: this.options.concurrency }, worker));
      // The budget ran out within the page: the worker goes on from the first server not read.
      const left = servers.find((server) => !done.has(toInt(server.id)));
      if (left) {
        last = toInt(left.id) - 1;
        continue;
      }
      last = toInt(servers[servers.length - 1].id);
    }
  }

  private async checkOne(server: Record<string, unknown>): Promise<Level> {
    const now = this.clock.now();
    const id = toInt(server.id);
    let facts;
    try {
      facts = await readCertificate(String(server.endpoint), this.options.timeoutMs, this.addresses);
    } catch (err) {
      await this.store(id, { error: String((err as Error).message).slice(0, 255), checked_at: now });
      return null;
    }
    const days =
      server.ssl_expiry_days === null || server.ssl_expiry_days === undefined ? 14 : toInt(server.ssl_expiry_days);
    const level: Level =
      facts.validTo <= now ? 'expired' : facts.validTo.getTime() - now.getTime() <= days * DAY ? 'soon' : null;
    // A certificate no longer expired, ending later than the expired one stored, is a renewal: it starts
    // over (it kept 'expired', so it alerted neither as it neared its end nor when it expired; session 34).
    // Renewals before the end keep their mark: a certificate shorter-lived than the threshold alerts once.
    const stored = toDate(server.valid_to);
    const renewed =
      server.alerted === 'expired' &&
      level !== 'expired' &&
      stored !== null &&
      facts.validTo.getTime() > stored.getTime();
    const previous = renewed ? null : ((server.alerted as Level) ?? null);
    const crossed = level !== null && level !== previous && !(previous === 'expired' && level === 'soon');
    const alertIds = await transactionWithRetry(this.knex, async (trx) => {
      await this.store(
        id,
        {
          valid_to: facts.validTo,
          issuer: facts.issuer,
          subject: facts.subject,
          error: null,
          checked_at: now,
          // A renewed certificate starts over; a threshold crossed is remembered, so it alerts once.
          alerted: level === null ? null : crossed ? level : previous,
        },
        trx,
      );
      if (!crossed) return [];
      const title = String(server.title);
      return this.alerts.raise(trx, toInt(server.organization_id), {
        kind: level === 'expired' ? 'ssl-expired' : 'ssl-expiring',
        serverId: id,
        subject: level === 'expired' ? `SSL certificate expired: ${title}` : `SSL certificate expiring: ${title}`,
        text: `The certificate of ${shownEndpoint(String(server.endpoint))} (issuer ${facts.issuer || 'unknown'}) ${
          level === 'expired' ? 'expired' : 'expires'
        } on ${facts.validTo.toISOString()}.`,
      });
    });
    await this.alerts.queue(alertIds);
    return level;
  }

  private async store(serverId: number, fields: Record<string, unknown>, trx: Knex | Knex.Transaction = this.knex) {
    await trx('monitor_certificates')
      .insert({ server_id: serverId, ...fields })
      .onConflict('server_id')
      .merge(Object.keys(fields));
  }
}
