import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  AppConfig,
  AppError,
  Clock,
  GroupCommit,
  hashToken,
  insertedId,
  Locks,
  SERVICES,
  toInt,
  toIso,
  transactionWithRetry,
} from '@switchboard/core';
import { AlertService } from '../alerts';
import { activeServers } from '../shared/active-servers';
import { exclusive } from '../shared/exclusive';
import { MONITOR_PREFIX } from '../shared/api';

export const DEFAULT_GRACE_SECONDS = 60;
/** Heartbeats turned missing per statement (each alerted once). */
const PAGE = 500;
/** Pings recorded in one transaction at most, and such transactions in flight per process. */
const PINGS_PER_RUN = 200;
const PING_RUNS_AT_ONCE = 2;

export interface HeartbeatCheck {
  missing: number;
  healthy: number;
  newlyMissing: number;
  busy: boolean;
}

/**
 * Heartbeats: a job on a customer's server pings its URL at least every `interval` seconds; one that has
 * not pinged for interval plus grace is missing, alerted once, and a recovery notice goes out when pings
 * resume. `due_at` (the last ping or the creation, plus both) makes the minute's check one indexed query.
 */
/** No heartbeat's token is longer: a longer one is unknown without a look. */
const MAX_TOKEN_LENGTH = 64;

@injectable()
export class HeartbeatService {
  /**
   * Pings arriving together are recorded by one UPDATE: its round trip and commit (a log flush on InnoDB)
   * are what a ping costs, so sharing them lets one process take thousands a second (docs/performance.md).
   */
  private readonly pings = new GroupCommit<string, boolean>((tokens) => this.recordPings(tokens), {
    maxWeight: PINGS_PER_RUN,
    concurrency: PING_RUNS_AT_ONCE,
  });

  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Locks) private readonly locks: Locks,
    @inject(SERVICES.Config) private readonly config: AppConfig,
    @inject(AlertService) private readonly alerts: AlertService,
  ) {}

  pingUrl(token: string): string {
    return `${this.config.publicUrl.replace(/\/$/, '')}${MONITOR_PREFIX}/ping/${token}`;
  }

  async create(
    serverId: number,
    intervalSeconds: number,
    graceSeconds = DEFAULT_GRACE_SECONDS,
  ): Promise<{ id: number; token: string; url: string }> {
    const server = await this.knex('monitor_servers').where({ id: serverId }).first('id');
    if (!server) throw new AppError('RESOURCE_NOT_FOUND', `Server with ID ${serverId} not found`);
    const now = this.clock.now();
    const token = crypto.randomBytes(24).toString('base64url');
    const id = insertedId(
      await this.knex('monitor_heartbeats').insert({
        server_id: serverId,
        // Its digest only, as API tokens: whoever reads the database cannot ping for a customer's job.
        token: hashToken(token),
        interval_seconds: intervalSeconds,
        grace_seconds: graceSeconds,
        due_at: new Date(now.getTime() + (intervalSeconds + graceSeconds) * 1000),
        state: 'new',
        created_at: now,
        updated_at: now,
      }),
    );
    return { id, token, url: this.pingUrl(token) };
  }

  /** A ping: one statement unless the heartbeat was missing (then a recovery notice) or is unknown. */
  async ping(token: string): Promise<void> {
    if (token.length > MAX_TOKEN_LENGTH) throw new AppError('RESOURCE_NOT_FOUND', 'Unknown heartbeat');
    const digest = hashToken(token);
    if (await this.pings.submit(digest)) return;
    const now = this.clock.now();
    const beat = await this.knex('monitor_heartbeats as h')
      .join('monitor_servers as s', 's.id', 'h.server_id')
      .join('organizations as o', 'o.id', 's.organization_id')
      .where('h.token', digest)
      .first(
        'h.id',
        'h.state',
        's.id as server_id',
        's.organization_id',
        's.title',
        's.state as server_state',
        'o.subscription_status',
      );
    if (!beat) throw new AppError('RESOURCE_NOT_FOUND', 'Unknown heartbeat');
    const alertIds = await transactionWithRetry(this.knex, async (trx) => {
      const back = await trx('monitor_heartbeats')
        .where({ id: beat.id, state: 'down' })
        .update({ last_ping_at: now, state: 'up', due_at: this.dueAfter(trx, now), updated_at: now });
      if (!back) return [];
      // A server left out of the checks (paused, or its organization's subscription not active) raises no
      // alert, as its heartbeats go missing without one; its "missing" not told yet lapses: it ended.
      if (beat.server_state === 'paused' || beat.subscription_status !== 'active') {
        await trx('monitor_alerts')
          .where({ heartbeat_id: beat.id, kind: 'heartbeat-missing' })
          .whereIn('state', ['unheard', 'pending'])
          .update({ state: 'lapsed' });
        return [];
      }
      return this.alerts.raise(trx, toInt(beat.organization_id), {
        kind: 'heartbeat-back',
        serverId: toInt(beat.server_id),
        heartbeatId: toInt(beat.id),
        subject: `Heartbeat back: ${String(beat.title)}`,
        text: `Heartbeat ${toInt(beat.id)} of ${String(beat.title)} pinged again at ${now.toISOString()}.`,
      });
    });
    await this.alerts.queue(alertIds);
  }

  /**
   * Whether each token's heartbeat (not missing) took its ping, by the tokens' digests: one UPDATE for the
   * whole run (its own commit); only when fewer rows took it than tokens came does a read tell which were
   * unknown or missing.
   */
  private async recordPings(tokens: string[]): Promise<boolean[]> {
    const now = this.clock.now();
    const distinct = [...new Set(tokens)].sort();
    const updated = await this.knex('monitor_heartbeats')
      .whereIn('token', distinct)
      .whereNot({ state: 'down' })
      .update({ last_ping_at: now, state: 'up', due_at: this.dueAfter(this.knex, now), updated_at: now });
    if (updated === distinct.length) return tokens.map(() => true);
    // A heartbeat that is missing (down) took nothing: its ping is a recovery, sent the slow way.
    const rows: Array<{ token: string; state: string }> = await this.knex('monitor_heartbeats')
      .whereIn('token', distinct)
      .select('token', 'state');
    const taken = new Set(rows.filter((r) => r.state !== 'down').map((r) => r.token));
    return tokens.map((t) => taken.has(t));
  }

  /** `check/heartbeats`: heartbeats past due turn missing (alerted once); counts of active servers' heartbeats. */
  async check(): Promise<HeartbeatCheck> {
    const newlyMissing = await exclusive(this.locks, 'heartbeats', () => this.markMissing());
    const counts: Array<{ state: unknown; n: unknown }> = await activeServers(this.knex)
      .join('monitor_heartbeats as h', 'h.server_id', 's.id')
      .groupBy('h.state')
      .select('h.state', this.knex.raw('count(*) as n'));
    const n = (states: string[]) =>
      counts.filter((c) => states.includes(String(c.state))).reduce((sum, c) => sum + Number(c.n), 0);
    return {
      missing: n(['down']),
      healthy: n(['new', 'up']),
      newlyMissing: newlyMissing ?? 0,
      busy: newlyMissing === null,
    };
  }

  private async markMissing(): Promise<number> {
    const now = this.clock.now();
    let marked = 0;
    for (;;) {
      const due: Array<Record<string, unknown>> = await activeServers(this.knex)
        .join('monitor_heartbeats as h', 'h.server_id', 's.id')
        .whereIn('h.state', ['new', 'up'])
        .andWhere('h.due_at', '<', now)
        .orderBy('h.id')
        .limit(PAGE)
        .select('h.id', 'h.last_ping_at', 'h.interval_seconds', 's.id as server_id', 's.organization_id', 's.title');
      if (!due.length) return marked;
      for (const beat of due) {
        const alertIds = await transactionWithRetry(this.knex, async (trx) => {
          // Still due: a ping that came since the page was read moved due_at on, and wins.
          const turned = await trx('monitor_heartbeats')
            .where({ id: beat.id })
            .whereIn('state', ['new', 'up'])
            .andWhere('due_at', '<', now)
            .update({ state: 'down', updated_at: now });
          if (!turned) return [];
          marked++;
          const last = toIso(beat.last_ping_at) ?? 'never';
          return this.alerts.raise(trx, toInt(beat.organization_id), {
            kind: 'heartbeat-missing',
            serverId: toInt(beat.server_id),
            heartbeatId: toInt(beat.id),
            subject: `Heartbeat missing: ${String(beat.title)}`,
            text: `Heartbeat ${toInt(beat.id)} of ${String(beat.title)} expects a ping every ${toInt(beat.interval_seconds)} s; the last one came ${last}.`,
          });
        });
        await this.alerts.queue(alertIds);
      }
    }
  }

  /** The due time after a ping at `now`, computed by the database from the row's interval and grace. */
  private dueAfter(knex: Knex | Knex.Transaction, now: Date): Knex.Raw {
    return knex.client.config.client === 'mysql2'
      ? knex.raw('DATE_ADD(?, INTERVAL (interval_seconds + grace_seconds) SECOND)', [now])
      : // SQLite keeps dates as epoch milliseconds.
        knex.raw('? + (interval_seconds + grace_seconds) * 1000', [now.getTime()]);
  }
}
