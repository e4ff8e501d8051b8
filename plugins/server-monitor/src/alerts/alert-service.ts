import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { AppConfig, Clock, insertedId, JobQueues, Mailer, SERVICES, toInt } from '@switchboard/core';
import { ALERT_JOB } from './jobs';
import { recipientsOf } from './recipients';
import { SMS_SENDER, SmsSender } from './sms';
import { USERS_DIRECTORY, UsersDirectory } from '../shared/users-directory';

export type AlertKind =
  'server-down' | 'server-up' | 'heartbeat-missing' | 'heartbeat-back' | 'ssl-expiring' | 'ssl-expired' | 'test';

export interface Alert {
  kind: AlertKind;
  serverId: number | null;
  subject: string;
  text: string;
}

/** Tries per alert before it is marked failed (the queue retries with backoff; the watchdog requeues). */
const MAX_ATTEMPTS = 5;
/** A pending alert this old whose job was lost (Redis restarted) is queued again. */
const REQUEUE_AFTER_MS = 120_000;

/**
 * Alerts to an organization's administrators. An alert is written as rows (one per recipient and
 * channel) in the same transaction as the change it reports, then queued: a crash or a failed send
 * leaves it pending, and it is tried again, never lost.
 */
@injectable()
export class AlertService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Queues) private readonly queues: JobQueues,
    @inject(SERVICES.Mailer) private readonly mailer: Mailer,
    @inject(SERVICES.Config) private readonly config: AppConfig,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Logger) private readonly logger: Logger,
    @inject(SMS_SENDER) private readonly sms: SmsSender,
    @inject(USERS_DIRECTORY.key) private readonly directory: UsersDirectory,
  ) {}

  /** Writes the alert's rows; returns their ids, to `queue` once the transaction committed. */
  async raise(trx: Knex | Knex.Transaction, organizationId: number, alert: Alert): Promise<number[]> {
    // In the change's transaction: on SQLite its connection is the only one, and it sees the change.
    const recipients = await recipientsOf(trx, this.directory, organizationId);
    const ids: number[] = [];
    for (const r of recipients) {
      const inserted = await trx('monitor_alerts').insert({
        organization_id: organizationId,
        server_id: alert.serverId,
        kind: alert.kind,
        channel: r.channel,
        recipient: r.address.slice(0, 191),
        subject: alert.subject.slice(0, 255),
        body: alert.text,
        state: 'pending',
        created_at: this.clock.now(),
      });
      ids.push(insertedId(inserted));
    }
    return ids;
  }

  async queue(ids: number[]): Promise<void> {
    for (const id of ids)
      await this.queues
        .get(ALERT_JOB)
        .add({ alertId: id }, { jobId: `alert.${id}`, retries: MAX_ATTEMPTS - 1, backoffMs: 5_000 });
  }

  /** Raises and queues at once, outside any other change (tests, test alerts). */
  async raiseNow(organizationId: number, alert: Alert): Promise<number[]> {
    const ids = await this.raise(this.knex, organizationId, alert);
    await this.queue(ids);
    return ids;
  }

  /** The job: one alert sent; a failure is recorded and thrown, so that the queue tries again. */
  async send(alertId: number): Promise<void> {
    const failure = await this.attempt(alertId);
    if (failure?.retry) throw failure.error;
  }

  /** One try now (test alerts): whether it was sent. */
  async sendOnce(alertId: number): Promise<boolean> {
    return (await this.attempt(alertId)) === null;
  }

  private async attempt(alertId: number): Promise<{ error: unknown; retry: boolean } | null> {
    const alert = await this.knex('monitor_alerts').where({ id: alertId, state: 'pending' }).first();
    if (!alert) return null;
    try {
      if (alert.channel === 'sms')
        await this.sms.send(alert.recipient, `${alert.subject}\n${alert.body}`.slice(0, 640));
      else
        await this.mailer.send({
          from: this.config.env.MONITOR_ALERT_FROM ?? `monitor@${new URL(this.config.publicUrl).hostname}`,
          to: alert.recipient,
          subject: alert.subject,
          text: alert.body,
        });
      await this.knex('monitor_alerts')
        .where({ id: alertId })
        .update({ state: 'sent', attempts: toInt(alert.attempts) + 1, error: null, sent_at: this.clock.now() });
      return null;
    } catch (err) {
      const attempts = toInt(alert.attempts) + 1;
      const error = String((err as Error).message ?? err).slice(0, 255);
      await this.knex('monitor_alerts')
        .where({ id: alertId })
        .update({ attempts, error, state: attempts >= MAX_ATTEMPTS ? 'failed' : 'pending' });
      this.logger.warn({ alertId, attempts, err: error }, 'alert not sent');
      return { error: err, retry: attempts < MAX_ATTEMPTS };
    }
  }

  /** Pending alerts whose jobs were lost are queued again (every minute, from the scheduler). */
  async requeueStale(now: Date): Promise<number> {
    const ids = await this.knex('monitor_alerts')
      .where({ state: 'pending' })
      .andWhere('created_at', '<', new Date(now.getTime() - REQUEUE_AFTER_MS))
      .orderBy('id')
      .limit(1000)
      .pluck('id');
    await this.queue(ids.map(toInt));
    return ids.length;
  }
}
