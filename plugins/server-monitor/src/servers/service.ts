import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  lockedOnMysql,
  Clock,
  deleteOwnedRow,
  dialectOfKnex,
  duplicateEntry,
  insertedId,
  notFound,
  ownedRow,
  paginate,
  rowMapper,
  SecretBox,
  SERVICES,
  toBool,
  toInt,
  toIso,
  transactionWithRetry,
  validationError,
  whereContains,
} from '@switchboard/core';
import {
  checkSchema,
  CheckListQuery,
  NewServer,
  Server,
  ServerChanges,
  ServerListQuery,
  serverDetailSchema,
  serverSchema,
} from './schemas';
import { MONITOR_ADDRESSES, MonitorAddresses } from '../shared/addresses';
import { endpointProblem, requestedUrl, sealEndpoint, sealEndpointKeeping, StoredEndpoint } from '../shared/endpoints';

const RECENT_LOG = 20;

export interface OperatorFilter {
  state?: string;
  organizationId?: number;
  plan?: string;
  search?: string;
  limit: number;
}

export interface OperatorServer {
  id: number;
  organization_id: number;
  organization: string;
  plan: string;
  title: string;
  endpoint: string;
  state: string;
  status: string | null;
  down_since: string | null;
  last_checked_at: string | null;
}
/** The state a check last found (`is_up`), pending if none did. */
const lastCheckedState = (isUp: unknown) =>
  isUp === null || isUp === undefined ? 'pending' : toBool(isUp) ? 'up' : 'down';
/** When a down server's outage began; none shown while it is paused (no check stands behind it). */
const downSince = (row: Record<string, unknown>) => (row.state === 'down' ? toIso(row.failing_since) : null);
const uptimeOf = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/** A server row as the API shows it; `plan` is its organization's. */
const serverMapper = (plan: string) =>
  rowMapper(serverSchema, {
    plan: () => plan,
    down_since: downSince,
    uptime: (row) => ({
      last_24h: uptimeOf(row.uptime_24h),
      last_7d: uptimeOf(row.uptime_7d),
      last_30d: uptimeOf(row.uptime_30d),
      calculated_at: toIso(row.uptime_at),
    }),
  });
const COLUMNS = [...serverMapper('').columns, 'failing_since', 'uptime_24h', 'uptime_7d', 'uptime_30d', 'uptime_at'];
const toCheck = rowMapper(checkSchema);
const toLogEntry = rowMapper(serverDetailSchema.properties.recent_log.items);

/**
 * An organization's servers over REST (issue 25): every query is scoped by organization_id, so another
 * organization's id is a 404. The check jobs, alerts, uptime and SSL read the same rows.
 */
@injectable()
export class ServersService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.SecretBox) private readonly secrets: SecretBox,
    @inject(MONITOR_ADDRESSES) private readonly addresses: MonitorAddresses,
  ) {}

  async list(orgId: number, q: ServerListQuery): Promise<{ items: Server[]; total: number }> {
    const filtered = this.knex('monitor_servers').where({ organization_id: orgId });
    if (q.state) filtered.andWhere({ state: q.state });
    if (q.search) whereContains(filtered, ['title', 'endpoint'], q.search);
    const toServer = serverMapper(await this.planOf(orgId));
    return paginate(filtered, q, COLUMNS, toServer);
  }

  async get(orgId: number, id: number) {
    const server = serverMapper(await this.planOf(orgId))(
      await ownedRow(this.knex, 'monitor_servers', orgId, id, COLUMNS, 'Server'),
    );
    const [lastFailure, certificate, heartbeats, log] = await Promise.all([
      this.knex('monitor_check_results')
        .where({ server_id: id, up: false })
        .orderBy('id', 'desc')
        .first('error', 'status'),
      this.knex('monitor_certificates').where({ server_id: id }).first('valid_to', 'issuer', 'error', 'checked_at'),
      this.knex('monitor_heartbeats')
        .where({ server_id: id })
        .orderBy('id')
        .select('id', 'state', 'interval_seconds', 'grace_seconds', 'last_ping_at', 'due_at'),
      this.knex('monitor_logs')
        .where({ server_id: id })
        .orderBy('id', 'desc')
        .limit(RECENT_LOG)
        .select('original_status', 'updated_status', 'note', 'created_at'),
    ]);
    return {
      ...server,
      last_error: lastFailure ? String(lastFailure.error ?? `answered ${String(lastFailure.status)}`) : null,
      ssl: certificate
        ? {
            valid_to: toIso(certificate.valid_to),
            issuer: certificate.issuer ?? null,
            error: certificate.error ?? null,
            checked_at: toIso(certificate.checked_at)!,
          }
        : null,
      heartbeats: heartbeats.map((h: Record<string, unknown>) => ({
        id: toInt(h.id),
        state: String(h.state) as 'new' | 'up' | 'down',
        interval_seconds: toInt(h.interval_seconds),
        grace_seconds: toInt(h.grace_seconds),
        last_ping_at: toIso(h.last_ping_at),
        due_at: toIso(h.due_at)!,
      })),
      recent_log: log.map(toLogEntry),
    };
  }

  /** A new server is pending until its tier's next round checks it (or paused, when asked). */
  async create(orgId: number, input: NewServer): Promise<Server> {
    const stored = this.stored(input.endpoint);
    const now = this.clock.now();
    const id = await transactionWithRetry(this.knex, async (trx) => {
      await this.refuseDuplicate(trx, orgId, stored);
      return insertedId(
        await trx('monitor_servers').insert({
          organization_id: orgId,
          title: input.title,
          ...stored,
          notes: input.notes ?? null,
          state: input.paused ? 'paused' : 'pending',
          paused_at: input.paused ? now : null,
          created_at: now,
          updated_at: now,
        }),
      );
    });
    return this.row(orgId, id);
  }

  /**
   * A new endpoint starts over (pending: its last status and outage were of another URL). Pausing stops
   * its checks and alerts; resuming gives it back its last checked state (pending if never checked): a
   * server paused while down is down again at once, its outage open until a check finds it up (it was
   * pending, out of the down lists until its next check, while its DOWN stood unanswered).
   */
  async update(orgId: number, id: number, changes: ServerChanges): Promise<Server> {
    const current = await ownedRow(
      this.knex,
      'monitor_servers',
      orgId,
      id,
      ['endpoint', 'endpoint_secret', 'state', 'is_up'],
      'Server',
    );
    const now = this.clock.now();
    const row: Record<string, unknown> = { updated_at: now };
    if (changes.title !== undefined) row.title = changes.title;
    if (changes.notes !== undefined) row.notes = changes.notes;
    const paused = changes.paused ?? current.state === 'paused';
    const stored =
      changes.endpoint === undefined ? null : this.stored(changes.endpoint, current as unknown as StoredEndpoint);
    // A password sealed under another APP_KEY opens to nothing: the endpoint given replaces it.
    const moved =
      stored !== null &&
      (stored.endpoint !== current.endpoint ||
        requestedUrl(stored, this.secrets) !== requestedUrl(current as unknown as StoredEndpoint, this.secrets));
    if (moved) {
      Object.assign(row, { ...stored, status: null, is_up: null, response_ms: null });
      Object.assign(row, { failing_since: null, down_alerted: false, uptime_stale: true });
    }
    if (paused && current.state !== 'paused') Object.assign(row, { state: 'paused', paused_at: now });
    else if (!paused && (current.state === 'paused' || moved))
      Object.assign(row, { state: moved ? 'pending' : lastCheckedState(current.is_up), paused_at: null });
    // The check worker writes servers' rows all the time: InnoDB may pick this update as a deadlock's
    // victim (Schemathesis met one), and asks for it to be run again.
    await transactionWithRetry(this.knex, async (trx) => {
      if (moved) await this.refuseDuplicate(trx, orgId, stored, id);
      await trx('monitor_servers').where({ organization_id: orgId, id }).update(row);
      // A new endpoint's certificate is another: read afresh, each threshold alerting anew.
      if (moved) await trx('monitor_certificates').where({ server_id: id }).delete();
    });
    return this.row(orgId, id);
  }

  /** `create` for an operator, who names the organization (the CLI). */
  async createFor(orgId: number, input: NewServer): Promise<Server> {
    if (!(await this.knex('organizations').where({ id: orgId }).first('id'))) throw notFound('Organization', orgId);
    return this.create(orgId, input);
  }

  /** `remove` for an operator, by id alone (the CLI); the server's title. */
  async removeAny(id: number): Promise<string> {
    const row = await this.knex('monitor_servers').where({ id }).first('organization_id', 'title');
    if (!row) throw notFound('Server', id);
    await this.remove(toInt(row.organization_id), id);
    return String(row.title);
  }

  /**
   * With its check results, logs, heartbeats and certificate (the tables' cascades). Its alerts nobody
   * heard, and those still being tried, lapse: its problems ended with it, and a DOWN told after it went
   * would never be followed by an UP (alerts keep no foreign key: they are the record of what was told).
   */
  async remove(orgId: number, id: number): Promise<void> {
    await transactionWithRetry(this.knex, async (trx) => {
      await deleteOwnedRow(trx, 'monitor_servers', orgId, id, 'Server');
      await trx('monitor_alerts')
        .where({ server_id: id })
        .whereIn('state', ['unheard', 'pending'])
        .update({ state: 'lapsed' });
    });
  }

  /** Its kept check results, newest first. */
  async checks(orgId: number, id: number, q: CheckListQuery) {
    await ownedRow(this.knex, 'monitor_servers', orgId, id, ['id'], 'Server');
    const results = this.knex('monitor_check_results').where({ server_id: id });
    const [{ total }] = await results.clone().count({ total: '*' });
    const rows = await results
      .orderBy('id', 'desc')
      .limit(q.per_page)
      .offset((q.page - 1) * q.per_page)
      .select(toCheck.columns);
    return { items: rows.map(toCheck), total: Number(total) };
  }

  /**
   * Servers of every organization, for an operator (the CLI): by state, organization, plan and a part of
   * the title or endpoint; down ones longest outage first, the others by id.
   */
  async across(filter: OperatorFilter): Promise<{ items: OperatorServer[]; total: number }> {
    const filtered = this.knex('monitor_servers as s').join('organizations as o', 'o.id', 's.organization_id');
    if (filter.state) filtered.where('s.state', filter.state);
    // Down means down now: a server of an organization whose subscription is not active is not checked,
    // so its `down` is as old as its last check (the dashboard leaves it out too).
    if (filter.state === 'down') filtered.where('o.subscription_status', 'active');
    if (filter.organizationId) filtered.where('s.organization_id', filter.organizationId);
    if (filter.plan) filtered.where('o.selected_plan', filter.plan);
    if (filter.search) whereContains(filtered, ['s.title', 's.endpoint'], filter.search);
    const [{ total }] = await filtered.clone().count({ total: '*' });
    if (filter.state === 'down') filtered.orderBy([{ column: 's.failing_since' }, { column: 's.id' }]);
    else filtered.orderBy('s.id');
    const rows: Array<Record<string, unknown>> = await filtered
      .limit(filter.limit)
      .select(
        's.id',
        's.organization_id',
        'o.name as organization',
        'o.selected_plan as plan',
        's.title',
        's.endpoint',
        's.state',
        's.status',
        's.failing_since',
        's.last_checked_at',
      );
    return {
      total: Number(total),
      items: rows.map((r) => ({
        id: toInt(r.id),
        organization_id: toInt(r.organization_id),
        organization: String(r.organization),
        plan: String(r.plan),
        title: String(r.title),
        endpoint: String(r.endpoint),
        state: String(r.state),
        status: r.status === null ? null : String(r.status),
        down_since: downSince(r),
        last_checked_at: toIso(r.last_checked_at),
      })),
    };
  }

  private async row(orgId: number, id: number): Promise<Server> {
    return serverMapper(await this.planOf(orgId))(
      await ownedRow(this.knex, 'monitor_servers', orgId, id, COLUMNS, 'Server'),
    );
  }

  /**
   * The endpoint as it is kept (its secrets sealed), or a 422 naming why it cannot be monitored; on an
   * update, `current`'s sealed secrets kept behind the masks sent back (sealEndpointKeeping).
   */
  private stored(endpoint: string, current?: StoredEndpoint): StoredEndpoint {
    const problem = endpointProblem(endpoint, this.addresses);
    if (problem) throw validationError('endpoint', 'monitorable', `endpoint: ${problem}`);
    if (!current) return sealEndpoint(endpoint, this.secrets);
    const kept = sealEndpointKeeping(endpoint, current, this.secrets);
    if (!kept)
      throw validationError(
        'endpoint',
        'password',
        'endpoint: its password or a secret query value is masked (***): give it again to change the endpoint',
      );
    return kept;
  }

  private async planOf(orgId: number): Promise<string> {
    const org = await this.knex('organizations').where({ id: orgId }).first('selected_plan');
    return String(org?.selected_plan ?? 'free');
  }

  /**
   * One organization watches an endpoint once, as the CSV import has it, compared byte for byte (a path's
   * case is part of it). The organization's row is locked first on MySQL, so two requests at once with the
   * same endpoint take turns and the second sees the first's server (both were created before session 26).
   */
  /** A 409 when another server of the organization requests the same URL with the same secrets (requestedUrl). */
  private async refuseDuplicate(
    trx: Knex.Transaction,
    orgId: number,
    stored: StoredEndpoint,
    except?: number,
  ): Promise<void> {
    await lockedOnMysql(trx('organizations').where({ id: orgId }).first('id'));
    const same = trx('monitor_servers').where({ organization_id: orgId });
    // MariaDB's default collation ignores case: compare the bytes.
    if (dialectOfKnex(trx) === 'mysql') same.whereRaw('?? = binary ?', ['endpoint', stored.endpoint]);
    else same.where({ endpoint: stored.endpoint });
    if (except !== undefined) same.whereNot({ id: except });
    const shownAlike: StoredEndpoint[] = await same.select('endpoint', 'endpoint_secret');
    const url = requestedUrl(stored, this.secrets);
    if (shownAlike.some((other) => requestedUrl(other, this.secrets) === url))
      throw duplicateEntry('endpoint', 'This organization already monitors this endpoint');
  }
}
