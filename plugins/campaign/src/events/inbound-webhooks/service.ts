import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import {
  AppConfig,
  Clock,
  deleteOwnedRow,
  insertedId,
  notFound,
  ownedRow,
  parseJson,
  placeholders,
  SecretBox,
  selectText,
  SERVICES,
  toBool,
  toInt,
  toIsoRequired,
  toText,
} from '@switchboard/core';
import { CAMPAIGN_API_PREFIX } from '../../shared/paths';
import type { InboundWebhook, InboundWebhookChanges, NewInboundWebhook } from './schemas';

const COLUMNS = [
  'id',
  'organization_id',
  'provider',
  'name',
  'secret',
  'is_active',
  'options',
  'created_at',
  'updated_at',
];

/** What a provider needs besides the secret, as stored (provider_d's topics). */
interface EndpointOptions {
  topicArns?: string[];
}
const optionsOf = (row: Record<string, unknown>) => parseJson<EndpointOptions>(row.options, {});
const storedOptions = (topicArns: string[] | undefined) =>
  topicArns !== undefined ? { options: JSON.stringify({ topicArns }) } : {};

/** An endpoint as the receiving side needs it: its secret opened. */
export interface ReceivingEndpoint {
  id: number;
  organizationId: number;
  secret: string | null;
  isActive: boolean;
  options: EndpointOptions;
  /** The row as read, to tell whether it changed since (`unchanged`). */
  stored: string;
}

const RECEIVING_COLUMNS = ['id', 'provider', 'organization_id', 'secret', 'is_active', 'options'];
/** What tells one version of an endpoint's row from another: its secret as sealed, state and options. */
const storedOf = (row: Record<string, unknown>) =>
  JSON.stringify([
    toText(row.provider),
    toInt(row.organization_id),
    row.secret ?? null,
    toBool(row.is_active),
    row.options ?? null,
  ]);
/** The most endpoints a process keeps read (the least recently used go first). */
const CACHED_ENDPOINTS = 1_000;
/** Endpoints named by id as last read, per database: see `receiving`. */
const cachedEndpoints = new WeakMap<Knex, LRUCache<string, ReceivingEndpoint>>();

/**
 * Secrets a provider signs with: random, unless given. Postmark (provider_c) sends HTTP Basic
 * credentials, so its generated secret is a user and a password.
 */
const generatedSecret = (provider: string) => {
  const random = crypto.randomBytes(24).toString('base64url');
  return provider === 'provider_c' ? `switchboard:${random}` : random;
};

/** Each organization's inbound webhook endpoints; their secrets are sealed at rest. */
@injectable()
export class InboundWebhooksService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.SecretBox) private readonly secrets: SecretBox,
    @inject(SERVICES.Config) private readonly config: AppConfig,
  ) {}

  private show(row: Record<string, unknown>, plainSecret?: string): InboundWebhook {
    const id = toInt(row.id);
    const provider = toText(row.provider);
    return {
      id,
      organization_id: toInt(row.organization_id),
      provider: provider as InboundWebhook['provider'],
      name: toText(row.name),
      url: `${this.config.publicUrl}${CAMPAIGN_API_PREFIX}/webhook/${provider}?endpoint=${id}`,
      ...(plainSecret !== undefined ? { secret: plainSecret } : {}),
      has_secret: row.secret !== null && row.secret !== undefined,
      is_active: toBool(row.is_active),
      topic_arns: optionsOf(row).topicArns ?? [],
      created_at: toIsoRequired(row.created_at),
      updated_at: toIsoRequired(row.updated_at),
    };
  }

  async all(orgId: number) {
    const rows = await this.knex('inbound_webhooks').where({ organization_id: orgId }).orderBy('id').select(COLUMNS);
    return rows.map((r: Record<string, unknown>) => this.show(r));
  }

  async get(orgId: number, id: number) {
    return this.show(await ownedRow(this.knex, 'inbound_webhooks', orgId, id, COLUMNS, 'Inbound webhook'));
  }

  async create(orgId: number, input: NewInboundWebhook) {
    const now = this.clock.now();
    const secret = input.secret ?? generatedSecret(input.provider);
    const id = insertedId(
      await this.knex('inbound_webhooks').insert({
        organization_id: orgId,
        provider: input.provider,
        name: input.name,
        secret: this.secrets.seal(secret),
        is_active: input.is_active,
        ...storedOptions(input.topic_arns),
        created_at: now,
        updated_at: now,
      }),
    );
    return this.show(await ownedRow(this.knex, 'inbound_webhooks', orgId, id, COLUMNS, 'Inbound webhook'), secret);
  }

  async update(orgId: number, id: number, input: InboundWebhookChanges) {
    const { secret, topic_arns: topicArns, ...fields } = input;
    const changed = await this.knex('inbound_webhooks')
      .where({ organization_id: orgId, id })
      .update({
        ...fields,
        ...storedOptions(topicArns),
        ...(secret !== undefined ? { secret: this.secrets.seal(secret) } : {}),
        updated_at: this.clock.now(),
      });
    if (!changed) throw notFound('Inbound webhook', id);
    return this.show(await ownedRow(this.knex, 'inbound_webhooks', orgId, id, COLUMNS, 'Inbound webhook'), secret);
  }

  async delete(orgId: number, id: number): Promise<void> {
    await deleteOwnedRow(this.knex, 'inbound_webhooks', orgId, id, 'Inbound webhook');
  }

  /**
   * The endpoint a request names (`?endpoint=`), or without one the provider's only active endpoint;
   * null when there is none (or several to choose from). One named by id comes as this process last read
   * it unless `fresh`: whatever is done with it must be confirmed with `unchanged` (the recorder does, once
   * for all the requests of a run) or the endpoint read again when it fails (a rotated secret).
   */
  async receiving(
    provider: string,
    endpointId: number | undefined,
    { fresh = false } = {},
  ): Promise<ReceivingEndpoint | null> {
    const cache =
      cachedEndpoints.get(this.knex) ??
      cachedEndpoints.set(this.knex, new LRUCache({ max: CACHED_ENDPOINTS })).get(this.knex)!;
    const key = `${provider}\u0000${endpointId}`;
    const cached = endpointId !== undefined && !fresh ? cache.get(key) : undefined;
    if (cached) return cached;
    const query = this.knex('inbound_webhooks').where({ provider }).select(RECEIVING_COLUMNS);
    const rows: Array<Record<string, unknown>> =
      endpointId !== undefined
        ? await query.andWhere({ id: endpointId })
        : await query.andWhere({ is_active: true }).limit(2);
    if (rows.length !== 1) {
      cache.delete(key);
      return null;
    }
    const [row] = rows;
    const endpoint: ReceivingEndpoint = {
      id: toInt(row.id),
      organizationId: toInt(row.organization_id),
      secret: row.secret === null ? null : this.openedSecret(toText(row.secret)),
      isActive: toBool(row.is_active),
      options: optionsOf(row),
      stored: storedOf(row),
    };
    if (endpointId !== undefined) cache.set(key, endpoint);
    return endpoint;
  }

  /**
   * A secret sealed under another APP_KEY (the key changed without its old one kept) opens to nothing: the
   * endpoint has no secret, so its requests are refused 401 as such, until a PUT gives it one again (it was
   * a 500 per request, each giving its rate-limit point back; session 27).
   */
  private openedSecret(sealed: string): string | null {
    try {
      return this.secrets.open(sealed);
    } catch {
      return null;
    }
  }

  /** Which of these endpoints' rows are still as they were read: one query for all. */
  async unchanged(endpoints: ReceivingEndpoint[]): Promise<(endpoint: ReceivingEndpoint) => boolean> {
    const now = new Map<number, string>();
    const ids = [...new Set(endpoints.map((e) => e.id))];
    const rows = await selectText(
      this.knex,
      `select ${RECEIVING_COLUMNS.map((c) => `\`${c}\``).join(', ')} from \`inbound_webhooks\` where \`id\` in (${placeholders(ids.length)})`,
      ids,
    );
    for (const row of rows) now.set(toInt(row.id), storedOf(row));
    return (endpoint) => now.get(endpoint.id) === endpoint.stored;
  }
}
