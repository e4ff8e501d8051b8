import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, SERVICES, toInt, toIso } from '@switchboard/core';
import { MAX_ATTEMPTS } from '../alerts';
import { SERVER_STATES, ServerState, serversOfActiveOrganizations } from '../shared/active-servers';

/** Rows each list of the page shows at most (the counts say how many there are). */
const SHOWN = 50;
const DAY = 86_400_000;
/** An alert whose every try failed is shown this long (it is never tried again). */
const FAILED_SHOWN_MS = DAY;
/** Certificates ending within this many days are listed (each organization is alerted at its own threshold). */
const EXPIRING_DAYS = 30;

export interface DownServer {
  id: number;
  title: string;
  endpoint: string;
  organization: string;
  plan: string;
  status: string | null;
  since: string | null;
  last_error: string | null;
}

export interface OnCall {
  /** Per plan, servers of active organizations by state. */
  counts: Array<{ plan: string } & Record<ServerState, number>>;
  down: { total: number; servers: DownServer[] };
  heartbeats: {
    total: number;
    missing: Array<{
      server_id: number;
      heartbeat_id: number;
      title: string;
      organization: string;
      due_at: string | null;
    }>;
  };
  certificates: {
    total: number;
    expiring: Array<{
      server_id: number;
      title: string;
      organization: string;
      valid_to: string | null;
      error: string | null;
    }>;
  };
  unheard: {
    total: number;
    alerts: Array<{
      /** unheard: no one to tell; failed: every try failed; retrying: tries failed so far, more to come. */
      status: 'unheard' | 'failed' | 'retrying';
      subject: string;
      organization: string;
      since: string | null;
    }>;
  };
}

const PLANS = ['enterprise', 'pro', 'basic', 'free'];

/**
 * What a person on call needs first (issue 25): which servers of active organizations are down (longest
 * outage first, since when, the last error), missing heartbeats, certificates ending soon, alerts nobody
 * heard, and the counts per plan. Each list is an index range read at most SHOWN rows deep, so the page
 * costs about the same at 70,000 servers as at 7.
 */
@injectable()
export class OnCallReader {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async read(): Promise<OnCall> {
    const [counts, down, heartbeats, certificates, unheard] = await Promise.all([
      this.counts(),
      this.down(),
      this.missingHeartbeats(),
      this.expiring(),
      this.unheard(),
    ]);
    return { counts, down, heartbeats, certificates, unheard };
  }

  private servers() {
    return serversOfActiveOrganizations(this.knex);
  }

  private async counts(): Promise<OnCall['counts']> {
    const rows: Array<Record<string, unknown>> = await this.servers()
      .groupBy('o.selected_plan', 's.state')
      .select('o.selected_plan as plan', 's.state', this.knex.raw('count(*) as n'));
    const byPlan = new Map(
      PLANS.map((plan) => [
        plan,
        { plan, ...Object.fromEntries(SERVER_STATES.map((s) => [s, 0])) } as OnCall['counts'][number],
      ]),
    );
    for (const r of rows) {
      const entry = byPlan.get(String(r.plan));
      if (entry && (SERVER_STATES as readonly string[]).includes(String(r.state)))
        entry[r.state as ServerState] = toInt(r.n);
    }
    return [...byPlan.values()];
  }

  private async down(): Promise<OnCall['down']> {
    const down = this.servers().where('s.state', 'down');
    const [{ n }] = await down.clone().count({ n: '*' });
    const rows: Array<Record<string, unknown>> = await down
      .orderBy([{ column: 's.failing_since' }, { column: 's.id' }])
      .limit(SHOWN)
      .select('s.id', 's.title', 's.endpoint', 's.status', 's.failing_since', 'o.name', 'o.selected_plan');
    const errors = await Promise.all(
      rows.map((r) =>
        this.knex('monitor_check_results').where({ server_id: r.id, up: false }).orderBy('id', 'desc').first('error'),
      ),
    );
    return {
      total: toInt(n),
      servers: rows.map((r, i) => ({
        id: toInt(r.id),
        title: String(r.title),
        endpoint: String(r.endpoint),
        organization: String(r.name),
        plan: String(r.selected_plan),
        status: r.status === null ? null : String(r.status),
        since: toIso(r.failing_since),
        last_error: errors[i]?.error ?? null,
      })),
    };
  }

  private async missingHeartbeats(): Promise<OnCall['heartbeats']> {
    const missing = this.servers()
      .join('monitor_heartbeats as h', 'h.server_id', 's.id')
      .where('h.state', 'down')
      .whereNot('s.state', 'paused');
    const [{ n }] = await missing.clone().count({ n: '*' });
    const rows: Array<Record<string, unknown>> = await missing
      .orderBy('h.due_at')
      .limit(SHOWN)
      .select('s.id', 'h.id as heartbeat_id', 's.title', 'o.name', 'h.due_at');
    return {
      total: toInt(n),
      missing: rows.map((r) => ({
        server_id: toInt(r.id),
        heartbeat_id: toInt(r.heartbeat_id),
        title: String(r.title),
        organization: String(r.name),
        due_at: toIso(r.due_at),
      })),
    };
  }

  private async expiring(): Promise<OnCall['certificates']> {
    const horizon = new Date(this.clock.now().getTime() + EXPIRING_DAYS * DAY);
    const ending = this.servers()
      .join('monitor_certificates as c', 'c.server_id', 's.id')
      .where('c.valid_to', '<', horizon)
      .whereNot('s.state', 'paused');
    const [{ n }] = await ending.clone().count({ n: '*' });
    const rows: Array<Record<string, unknown>> = await ending
      .orderBy('c.valid_to')
      .limit(SHOWN)
      .select('s.id', 's.title', 'o.name', 'c.valid_to', 'c.error');
    return {
      total: toInt(n),
      expiring: rows.map((r) => ({
        server_id: toInt(r.id),
        title: String(r.title),
        organization: String(r.name),
        valid_to: toIso(r.valid_to),
        error: r.error === null || r.error === undefined ? null : String(r.error),
      })),
    };
  }

  /**
   * Alerts nobody heard: kept with no one to tell, and (the last day's) those whose every try failed, once
   * per alert (its rows, one per recipient, were raised at one time).
   */
  private async unheard(): Promise<OnCall['unheard']> {
    const unheard = this.knex('monitor_alerts as a')
      .join('organizations as o', 'o.id', 'a.organization_id')
      .where('a.state', 'unheard');
    const [{ n }] = await unheard.clone().count({ n: '*' });
    const rows: Array<Record<string, unknown>> = await unheard
      .orderBy('a.id', 'desc')
      .limit(SHOWN)
      .select('a.subject', 'o.name', 'a.created_at');
    const failed = await this.notDelivered(
      'failed',
      (q) =>
        q
          .where('a.state', 'failed')
          .andWhere('a.created_at', '>', new Date(this.clock.now().getTime() - FAILED_SHOWN_MS)),
      (r) => `not delivered: ${String(r.error ?? 'unknown error')}`,
    );
    // Still being tried after a failed try: the relay or SMS API has been failing it (tries over ~42 minutes).
    const trying = await this.notDelivered(
      'retrying',
      (q) => q.where('a.state', 'pending').andWhere('a.attempts', '>', 0),
      (r) =>
        `not delivered yet, ${toInt(r.attempts)} of ${MAX_ATTEMPTS} tries failed: ${String(r.error ?? 'unknown error')}`,
    );
    const alerts = [
      ...trying.values(),
      ...failed.values(),
      ...rows.map((r) => ({
        status: 'unheard' as const,
        subject: String(r.subject),
        organization: String(r.name),
        since: toIso(r.created_at),
      })),
    ];
    return { total: toInt(n) + trying.size + failed.size, alerts: alerts.slice(0, SHOWN) };
  }

  /**
   * Alerts of a state that did not reach their recipients, once per alert (its rows, one per recipient, were
   * raised at one time), newest first, with what went wrong.
   */
  private async notDelivered(
    status: 'failed' | 'retrying',
    which: (q: Knex.QueryBuilder) => Knex.QueryBuilder,
    why: (row: Record<string, unknown>) => string,
  ): Promise<Map<string, OnCall['unheard']['alerts'][number]>> {
    const rows: Array<Record<string, unknown>> = await which(
      this.knex('monitor_alerts as a').join('organizations as o', 'o.id', 'a.organization_id'),
    )
      .orderBy('a.id', 'desc')
      .limit(SHOWN * 4)
      .select('a.organization_id', 'a.subject', 'o.name', 'a.created_at', 'a.error', 'a.attempts');
    const alerts = new Map<string, OnCall['unheard']['alerts'][number]>();
    for (const r of rows) {
      const key = `${toInt(r.organization_id)}|${String(r.subject)}|${toIso(r.created_at)}`;
      if (!alerts.has(key))
        alerts.set(key, {
          status,
          subject: `${String(r.subject)} (${why(r)})`,
          organization: String(r.name),
          since: toIso(r.created_at),
        });
    }
    return alerts;
  }
}
