import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import {
  AppConfig,
  Clock,
  insertedId,
  JobQueues,
  Mailer,
  queueEachSoon,
  SERVICES,
  toDate,
  toInt,
  toIso,
  toNullableInt,
} from '@switchboard/core';
import { ALERT_JOB } from './jobs';
import { Recipient, recipientsOf } from './recipients';
import { defaultAlertSender } from './sender-address';
import { SMS_SENDER, SmsSender } from './sms';
import { USERS_DIRECTORY, UsersDirectory } from '../shared/users-directory';

export type AlertKind =
  'server-down' | 'server-up' | 'heartbeat-missing' | 'heartbeat-back' | 'ssl-expiring' | 'ssl-expired' | 'test';

export interface Alert {
  kind: AlertKind;
  serverId: number | null;
  /** The heartbeat a heartbeat's alert is about (its server may have several). */
  heartbeatId?: number;
  subject: string;
  text: string;
}

/** The outage alert each recovery ends. */
const RECOVERY_OF: Partial<Record<AlertKind, AlertKind>> = {
  'server-up': 'server-down',
  'heartbeat-back': 'heartbeat-missing',
};

/** The kinds told in the order raised, to each recipient and channel: a server's DOWN and UP, a heartbeat's. */
const IN_ORDER_WITH: Partial<Record<AlertKind, AlertKind[]>> = {
  'server-down': ['server-down', 'server-up'],
  'server-up': ['server-down', 'server-up'],
  'heartbeat-missing': ['heartbeat-missing', 'heartbeat-back'],
  'heartbeat-back': ['heartbeat-missing', 'heartbeat-back'],
};

/** An alert kept with no one to tell, as `tellUnheard` reads it. */
interface UnheardAlert {
  id: number;
  organization_id: unknown;
  server_id: unknown;
  heartbeat_id: unknown;
  kind: string;
  subject: unknown;
  body: unknown;
  created_at: unknown;
}

/**
 * Tries per alert before it is marked failed (the queue retries with backoff from 5 s, doubling: the last
 * try ~42 minutes after the first, so a relay down that long loses no alert; the watchdog requeues).
 */
export const MAX_ATTEMPTS = 10;
/** Rows of one alert (one per recipient and channel) read to judge whether anyone heard it. */
const LATEST_ROWS = 100;
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

  /**
   * Writes the alert's rows; returns their ids, to `queue` once the transaction committed. With no one to
   * tell, the alert is kept `unheard` (told to the first recipient who appears while it lasts: `tellUnheard`),
   * written to the server's status log and logged at warn level; a recovery whose outage nobody heard of
   * is told to no one (docs/decisions.md, server-monitor, Alerts nobody heard).
   */
  async raise(trx: Knex | Knex.Transaction, organizationId: number, alert: Alert): Promise<number[]> {
    // In the change's transaction: on SQLite its connection is the only one, and it sees the change.
    const recipients = await recipientsOf(trx, this.directory, organizationId);
    const recovered = RECOVERY_OF[alert.kind];
    if (recovered && alert.serverId !== null && !(await this.outageWasHeard(trx, alert, recovered))) return [];
    if (!recipients.length) {
      if (alert.kind !== 'test') await this.keepUnheard(trx, organizationId, alert);
      return [];
    }
    return this.write(trx, organizationId, alert, recipients);
  }

  private async write(
    trx: Knex | Knex.Transaction,
    organizationId: number,
    alert: Alert,
    recipients: Recipient[],
  ): Promise<number[]> {
    const ids: number[] = [];
    for (const r of recipients) {
      const inserted = await trx('monitor_alerts').insert({
        organization_id: organizationId,
        server_id: alert.serverId,
        heartbeat_id: alert.heartbeatId ?? null,
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

  private async keepUnheard(trx: Knex | Knex.Transaction, organizationId: number, alert: Alert): Promise<void> {
    const now = this.clock.now();
    await trx('monitor_alerts').insert({
      organization_id: organizationId,
      server_id: alert.serverId,
      heartbeat_id: alert.heartbeatId ?? null,
      kind: alert.kind,
      channel: 'none',
      recipient: '',
      subject: alert.subject.slice(0, 255),
      body: alert.text,
      state: 'unheard',
      created_at: now,
    });
    if (alert.serverId !== null)
      await trx('monitor_logs').insert({
        server_id: alert.serverId,
        original_status: null,
        updated_status: 'unheard',
        note: `${alert.subject}: no one to tell (no administrator with an alert channel); told to the first who appears while it lasts`.slice(
          0,
          1024,
        ),
        created_at: now,
      });
    this.logger.warn(
      { organizationId, serverId: alert.serverId, kind: alert.kind, subject: alert.subject },
      'alert with no one to tell: the organization has no administrator with an alert channel',
    );
  }

  /**
   * Whether the outage a recovery ends was told to anyone: one of its latest alert's rows (one per
   * recipient, raised at one time) is sent, told or still being tried; not when each is unheard, lapsed or
   * failed (every try failed: an "UP again" would be the first anyone hears of it).
   */
  private async outageWasHeard(trx: Knex | Knex.Transaction, alert: Alert, kind: AlertKind): Promise<boolean> {
    const outage = () =>
      ofSameOutage(trx('monitor_alerts').where({ server_id: alert.serverId, kind }), alert.heartbeatId);
    // The latest rows by id, those raised with the newest.
    const latest: Array<{ state: unknown; created_at: unknown }> = await outage()
      .orderBy('id', 'desc')
      .limit(LATEST_ROWS)
      .select('state', 'created_at');
    const at = latest.length ? String(toIso(latest[0].created_at)) : null;
    const states = latest.filter((r) => String(toIso(r.created_at)) === at).map((r) => r.state);
    if (!states.length || states.some((state) => !['unheard', 'lapsed', 'failed'].includes(String(state)))) return true;
    await outage().where({ state: 'unheard' }).update({ state: 'lapsed' });
    return false;
  }

  /**
   * Unheard alerts whose problem lasts are told to the recipients the organization has now (every minute,
   * from the scheduler); those whose problem ended lapse. Only organizations with someone to tell now are
   * read, each in pages by id: alerts of organizations still without anyone never hold others back (a
   * first page of 500 of theirs did, for good; session 26).
   */
  async tellUnheard(): Promise<number> {
    const organizations = (
      await this.knex('monitor_alerts').where({ state: 'unheard' }).distinct('organization_id').pluck('organization_id')
    ).map(toInt);
    let told = 0;
    for (const organizationId of organizations) {
      const recipients = await recipientsOf(this.knex, this.directory, organizationId);
      if (!recipients.length) continue;
      for (let after = 0; ;) {
        const unheard: UnheardAlert[] = await this.knex('monitor_alerts')
          .where({ state: 'unheard', organization_id: organizationId })
          .andWhere('id', '>', after)
          .orderBy('id')
          .limit(500)
          .select('id', 'organization_id', 'server_id', 'heartbeat_id', 'kind', 'subject', 'body', 'created_at');
        if (!unheard.length) break;
        after = toInt(unheard[unheard.length - 1].id);
        for (const row of unheard) told += (await this.tellOne(row, recipients)) ? 1 : 0;
      }
    }
    return told;
  }

  /** One unheard alert told to the recipients, or lapsed when its problem ended: whether it was told. */
  private async tellOne(row: UnheardAlert, recipients: Recipient[]): Promise<boolean> {
    if (!(await this.lasts(row))) {
      await this.knex('monitor_alerts').where({ id: row.id, state: 'unheard' }).update({ state: 'lapsed' });
      return false;
    }
    const since = toDate(row.created_at)?.toISOString() ?? '';
    const ids = await this.knex.transaction(async (trx) => {
      const taken = await trx('monitor_alerts').where({ id: row.id, state: 'unheard' }).update({ state: 'told' });
      if (!taken) return [];
      const alert = {
        kind: row.kind as AlertKind,
        serverId: row.server_id === null ? null : toInt(row.server_id),
        heartbeatId: toNullableInt(row.heartbeat_id) ?? undefined,
        subject: String(row.subject),
        text: `${String(row.body)}\n\n(Raised at ${since}, when the organization had no one to alert; it still lasts.)`,
      };
      return this.write(trx, toInt(row.organization_id), alert, recipients);
    });
    await this.queue(ids);
    return ids.length > 0;
  }

  /**
   * Queues the alerts written; a Redis that does not take them leaves them to requeueStale (they are
   * pending rows), so a heartbeat's ping that brought it back is answered all the same.
   */
  async queue(ids: number[]): Promise<void> {
    const queue = this.queues.get(ALERT_JOB);
    const add = (id: number) =>
      queue.add({ alertId: id }, { jobId: `alert.${id}`, retries: MAX_ATTEMPTS - 1, backoffMs: 5_000 });
    await queueEachSoon(ids, add, this.logger, 'alert');
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
    if (await this.earlierPending(alert)) {
      // Not a try: it goes once the alert before it has (whose own tries end within ~42 minutes).
      const error = new Error('waits for the alert raised before it to this recipient to be sent first');
      await this.knex('monitor_alerts').where({ id: alertId, state: 'pending' }).update({ error: error.message });
      return { error, retry: true };
    }
    if ((await this.outageAlertOf(alert)) === 'failed') {
      await this.knex('monitor_alerts').where({ id: alertId, state: 'pending' }).update({ state: 'lapsed' });
      return null;
    }
    try {
      if (alert.channel === 'sms')
        await this.sms.send(alert.recipient, `${alert.subject}\n${alert.body}`.slice(0, 640));
      else
        await this.mailer.send({
          from: this.config.env.MONITOR_ALERT_FROM ?? defaultAlertSender(this.config.publicUrl),
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

  /**
   * Whether an alert of the same server (or heartbeat) raised before this one to the same recipient and
   * channel is still being tried: a server's DOWN and UP, a heartbeat's "missing" and "back", go in the
   * order raised. An "UP again" sent before its late DOWN read as a new outage (session 29); a DOWN sent
   * before the UP of the outage before it left "UP again" as the last word on a server that was down
   * (session 34). One raised before server monitor 1.2/07 names the server alone: a heartbeat's alert waits
   * for it too.
   */
  private async earlierPending(alert: Record<string, unknown>): Promise<boolean> {
    const kinds = IN_ORDER_WITH[alert.kind as AlertKind];
    if (!kinds || alert.server_id === null) return false;
    const row = await this.earlier(alert).whereIn('kind', kinds).andWhere({ state: 'pending' }).first('id');
    return Boolean(row);
  }

  /** This alert's server's (or heartbeat's) alerts raised before it to the same recipient and channel. */
  private earlier(alert: Record<string, unknown>): Knex.QueryBuilder {
    return ofSameOutage(
      this.knex('monitor_alerts').where({
        server_id: alert.server_id,
        channel: alert.channel,
        recipient: alert.recipient,
      }),
      toNullableInt(alert.heartbeat_id) ?? undefined,
    ).andWhere('id', '<', toInt(alert.id));
  }

  /**
   * A recovery's outage alert to the same recipient and channel: 'failed' when every try failed (the
   * recipient never heard of the outage: its recovery lapses); null otherwise, and for alerts that are no
   * recovery. A heartbeat's "missing" raised before server monitor 1.2/07 names the server alone: a "back"
   * never lapses for it, as it may be another heartbeat's.
   */
  private async outageAlertOf(alert: Record<string, unknown>): Promise<'failed' | null> {
    const outage = RECOVERY_OF[alert.kind as AlertKind];
    if (!outage || alert.server_id === null) return null;
    const heartbeatId = toNullableInt(alert.heartbeat_id) ?? undefined;
    const row = await this.earlier(alert).where({ kind: outage }).orderBy('id', 'desc').first('state', 'heartbeat_id');
    if (row?.state !== 'failed') return null;
    return alert.kind === 'server-up' || (heartbeatId !== undefined && toNullableInt(row.heartbeat_id) === heartbeatId)
      ? 'failed'
      : null;
  }

  /** Whether an unheard alert's problem is still there (a recovery told late tells nothing: it lapses). */
  private async lasts(alert: UnheardAlert): Promise<boolean> {
    if (alert.server_id === null) return false;
    const server_id = toInt(alert.server_id);
    const found = (table: string, where: Record<string, unknown>) =>
      this.knex(table)
        .where({ server_id, ...where })
        .first('server_id')
        .then(Boolean);
    switch (alert.kind) {
      case 'server-down':
        return Boolean(await this.knex('monitor_servers').where({ id: server_id, state: 'down' }).first('id'));
      case 'heartbeat-missing':
        return found('monitor_heartbeats', {
          state: 'down',
          ...(alert.heartbeat_id === null ? {} : { id: alert.heartbeat_id }),
        });
      case 'ssl-expiring':
        return found('monitor_certificates', { alerted: 'soon' });
      case 'ssl-expired':
        return found('monitor_certificates', { alerted: 'expired' });
      default:
        return false;
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

/**
 * Alerts of the same outage as a heartbeat's: that heartbeat's, and those raised before server monitor
 * 1.2/07, which name the server alone. A server's own alerts name no heartbeat.
 */
function ofSameOutage(query: Knex.QueryBuilder, heartbeatId: number | undefined): Knex.QueryBuilder {
  if (heartbeatId === undefined) return query;
  return query.where((q) => q.where('heartbeat_id', heartbeatId).orWhereNull('heartbeat_id'));
}
