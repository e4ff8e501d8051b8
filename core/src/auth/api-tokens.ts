import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { SERVICES } from '../container/service-keys';
import { Clock } from '../clock';
import type { AppConfig } from '../config/types';
import { insertedId, parseJson, toDate, toInt, toIso, toIsoRequired, toOneOf, toText } from '../db/values';
import { addressAllowed, parseAllowlist } from './ip-allowlist';
import { permissionProblem } from './permissions';
import { PLANS, Plan } from './organizations';
import { raiseRevocationRevision, RevocationWatch } from './revocation-watch';

export interface AuthContext {
  tokenId: number;
  organizationId: number;
  plan: Plan;
  permissions: string[];
}

export type TokenRejection = 'missing' | 'invalid' | 'expired' | 'revoked' | 'address';
export type VerifyResult = { ok: true; auth: AuthContext } | { ok: false; reason: TokenRejection };

export interface NewToken {
  name: string;
  permissions: string[];
  ipAllowlist?: string[];
  expiresAt?: Date | null;
}

export interface TokenInfo {
  id: number;
  organization_id: number;
  name: string;
  prefix: string;
  permissions: string[];
  ip_whitelist: string[] | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

interface CachedToken {
  auth: AuthContext;
  expiresAt: Date | null;
  revokedAt: Date | null;
  allowlist: ReturnType<typeof parseAllowlist> | null;
}

const TOKEN_PREFIX = 'sb_';
/** Tokens carry 256 random bits, so a fast hash is enough: there is nothing to brute-force. */
export const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/**
 * Creates, revokes and verifies API tokens. One per engine (a singleton of the root container), so the
 * HTTP pipeline and commands share its cache of verified tokens: the hot path costs no query. A
 * revocation drops the token from this cache at once and raises the revocation revision, which every
 * other process polls (RevocationWatch) to drop its own cache within a second.
 */
@injectable()
export class ApiTokenService {
  /** Verified tokens, for at most tokenCacheSeconds; none when that is 0. */
  private readonly cache: LRUCache<string, CachedToken> | null;
  private readonly revocations: RevocationWatch;
  /** Raised whenever the cache is dropped, so a load that read its row before a revocation is not cached. */
  private generation = 0;

  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SERVICES.Config) config: AppConfig,
    @inject(SERVICES.Resources) private readonly resources: string[],
    @inject(SERVICES.Logger) logger: Logger,
  ) {
    this.cache =
      config.tokenCacheSeconds > 0 ? new LRUCache({ max: 10_000, ttl: config.tokenCacheSeconds * 1000 }) : null;
    this.revocations = new RevocationWatch(
      knex,
      () => this.dropCache(),
      (err) => logger.warn({ err }, 'cannot read the token revocation revision; verifying tokens without the cache'),
    );
  }

  /** Stops watching for revocations (before the database pool closes). */
  close(): void {
    this.revocations.stop();
  }

  /** Returns the plain token once; only its hash is stored. */
  async create(organizationId: number, input: NewToken): Promise<{ token: string; info: TokenInfo }> {
    for (const p of input.permissions) {
      const problem = permissionProblem(p, this.resources);
      if (problem) throw new Error(`Invalid permission: ${problem}`);
    }
    if (input.ipAllowlist) parseAllowlist(input.ipAllowlist);
    const token = TOKEN_PREFIX + crypto.randomBytes(32).toString('base64url');
    const id = insertedId(
      await this.knex('api_tokens').insert({
        organization_id: organizationId,
        name: input.name,
        token_hash: hashToken(token),
        token_prefix: token.slice(0, 10),
        permissions: JSON.stringify(input.permissions),
        ip_whitelist: input.ipAllowlist?.length ? JSON.stringify(input.ipAllowlist) : null,
        expires_at: input.expiresAt ?? null,
        created_at: this.clock.now(),
      }),
    );
    return { token, info: (await this.info(id))! };
  }

  async info(id: number): Promise<TokenInfo | null> {
    const row = await this.knex('api_tokens').where({ id }).first();
    if (!row) return null;
    return {
      id: toInt(row.id),
      organization_id: toInt(row.organization_id),
      name: toText(row.name),
      prefix: toText(row.token_prefix),
      permissions: parseJson(row.permissions, []),
      ip_whitelist: parseJson(row.ip_whitelist, null),
      expires_at: toIso(row.expires_at),
      revoked_at: toIso(row.revoked_at),
      created_at: toIsoRequired(row.created_at),
    };
  }

  /** False when there is no such token. */
  async revoke(id: number): Promise<boolean> {
    const updated = await this.knex.transaction(async (trx) => {
      const count = await trx('api_tokens')
        .where({ id })
        .whereNull('revoked_at')
        .update({ revoked_at: this.clock.now() });
      if (count) await raiseRevocationRevision(trx);
      return count;
    });
    if (this.cache) {
      this.generation++;
      for (const [hash, cached] of this.cache.entries()) if (cached.auth.tokenId === id) this.cache.delete(hash);
    }
    if (updated) return true;
    return (await this.info(id)) !== null;
  }

  async verify(token: string | undefined, clientAddress: string): Promise<VerifyResult> {
    if (!token) return { ok: false, reason: 'missing' };
    const hash = hashToken(token);
    const cached = this.cache?.get(hash) ?? (await this.load(hash));
    if (!cached) return { ok: false, reason: 'invalid' };
    const now = this.clock.now();
    // Nothing schedules a revocation: any stamp counts, so a clock behind the revoking machine's cannot delay it.
    if (cached.revokedAt) return { ok: false, reason: 'revoked' };
    if (cached.expiresAt && cached.expiresAt <= now) return { ok: false, reason: 'expired' };
    if (cached.allowlist && !addressAllowed(clientAddress, cached.allowlist)) return { ok: false, reason: 'address' };
    return { ok: true, auth: cached.auth };
  }

  private dropCache(): void {
    this.generation++;
    this.cache?.clear();
  }

  private async load(hash: string): Promise<CachedToken | undefined> {
    // The first revision is read before anything is cached, so no later revocation goes unnoticed.
    if (this.cache) await this.revocations.start();
    const generation = this.generation;
    const row = await this.knex('api_tokens as t')
      .join('organizations as o', 'o.id', 't.organization_id')
      .where('t.token_hash', hash)
      .first(
        't.id',
        't.organization_id',
        't.permissions',
        't.ip_whitelist',
        't.expires_at',
        't.revoked_at',
        'o.selected_plan',
      );
    if (!row) return undefined;
    const allowlist = parseJson<string[] | null>(row.ip_whitelist, null);
    const cached: CachedToken = {
      auth: {
        tokenId: toInt(row.id),
        organizationId: toInt(row.organization_id),
        plan: toOneOf(row.selected_plan, PLANS),
        permissions: parseJson(row.permissions, []),
      },
      expiresAt: toDate(row.expires_at),
      revokedAt: toDate(row.revoked_at),
      allowlist: allowlist ? parseAllowlist(allowlist) : null,
    };
    if (generation === this.generation) this.cache?.set(hash, cached);
    return cached;
  }
}
