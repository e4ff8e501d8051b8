import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  AppError,
  Clock,
  compileValidator,
  insertRowsReturningIds,
  isUniqueViolation,
  loadOnFirstUse,
  SERVICES,
  transactionWithRetry,
} from '@switchboard/core';
import { applyListDeltas, insertMemberships, ListsGone, Membership } from '../lists';
import { adjustStatusCounts, ensureStatusCountRows } from '../subscribers';
import { subscriberCreated, WebhookOutbox } from '../../webhooks';
import { normalizeEmail } from '../../shared/email';
import { assertMetaDataFits } from '../../shared/meta-data';
import { recordConfirmationsDue } from '../../shared/confirmation-job';
import { profileColumns } from '../subscribers';
import { SubscriberWriter, withProfile } from '../subscribers';
import { insertSearchRows, replaceSearchRows, SearchSource } from '../search';
import { updateProfiles } from '../subscribers';
import { BatchCreate, BatchOutcome, BatchRow, batchRowSchema } from './schemas';
import { inSqliteTurn } from './sqlite-turns';

const CHUNK = 1000;
// Compiled at the first batch, not by every CLI command that loads the plugin.
const validateRow = loadOnFirstUse(() => compileValidator(batchRowSchema, 'body'));

type Row = BatchRow & { index: number };

export type BatchResult = Required<BatchOutcome> & {
  /** Ids of new unconfirmed subscribers, for their confirmation mails. */
  unconfirmed: number[];
};

/**
 * Rows of new subscribers, all with the same columns (insertRows takes those of the first row): the
 * profile fields that some row of the chunk gives, NULL where another row does not (meta_data `{}`);
 * fields no row gives are left out, to their default NULL.
 */
function subscriberRows(orgId: number, status: string, now: Date, fresh: Row[]): Record<string, unknown>[] {
  const profiles = fresh.map(profileColumns);
  const given = new Set(profiles.flatMap((p) => Object.keys(p)));
  return fresh.map((r, i) => {
    const row: Record<string, unknown> = {
      organization_id: orgId,
      email: r.email,
      status,
      confirmed_at: status === 'active' ? now : null,
      created_at: now,
      updated_at: now,
    };
    for (const key of given) row[key] = profiles[i][key] ?? null;
    row.meta_data = profiles[i].meta_data ?? '{}';
    return row;
  });
}

/**
 * Creates or updates subscribers by email: rows are checked one by one, then written in chunks of
 * CHUNK, each chunk in one transaction with multi-row inserts and the counters adjusted once.
 */
@injectable()
export class BatchImport {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(SubscriberWriter) private readonly writer: SubscriberWriter,
    @inject(WebhookOutbox) private readonly webhooks: WebhookOutbox,
  ) {}

  run(orgId: number, input: BatchCreate): Promise<BatchResult> {
    return inSqliteTurn(this.knex, () => this.runNow(orgId, input));
  }

  private async runNow(orgId: number, input: BatchCreate): Promise<BatchResult> {
    await this.writer.assertListsExist(this.knex, orgId, input.lists ?? []);
    await ensureStatusCountRows(this.knex, orgId);
    const result: BatchResult = { created: 0, updated: 0, failed: 0, errors: [], unconfirmed: [] };
    const rows = this.checkRows(input.subscribers, result);
    // The request's lists were checked above; a list deleted during the import fails the rows after (ListsGone).
    const knownLists = await this.writer.existingLists(
      this.knex,
      orgId,
      rows.flatMap((r) => r.lists ?? []),
    );
    for (const id of input.lists ?? []) knownLists.add(id);
    const plan = { lookFirst: false };
    for (let i = 0; i < rows.length; i += CHUNK) {
      await this.writeChunkRetrying(orgId, rows.slice(i, i + CHUNK), input, knownLists, result, plan);
    }
    result.failed = result.errors.length;
    result.errors.sort((a, b) => a.index - b.index);
    return result;
  }

  private checkRows(raw: object[], result: BatchResult): Row[] {
    const seen = new Set<string>();
    const rows: Row[] = [];
    raw.forEach((candidate, index) => {
      const given = candidate as { email?: unknown };
      // The request body is ours: the row is trimmed and checked in place, not copied.
      const email = typeof given.email === 'string' ? (given.email = given.email.trim()) : null;
      try {
        const row = validateRow()<BatchRow>(candidate);
        assertMetaDataFits(row.meta_data);
        const normalized = normalizeEmail(row.email);
        if (seen.has(normalized)) {
          result.errors.push({
            index,
            email: normalized,
            field: 'email',
            rule: 'duplicate_in_batch',
            message: `${normalized} appears earlier in this batch`,
          });
          return;
        }
        seen.add(normalized);
        rows.push(Object.assign(row, { email: normalized, index }));
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        result.errors.push({
          index,
          email,
          field: err.details?.field ?? 'subscribers',
          rule: err.details?.rule ?? 'invalid',
          message: err.message,
        });
      }
    });
    return rows;
  }

  /**
   * A chunk is first written as if all its emails were new, without looking them up: a bulk import
   * is mostly new subscribers, and the lookup of 1000 emails costs MariaDB about a twentieth of the
   * import. The first email that exists fails the insert (InnoDB stops there); the chunk's transaction
   * is rolled back and runs again with the lookup, and so do the request's later chunks. With the
   * lookup, a unique violation means a concurrent batch inserted one of our new emails first: the
   * chunk runs again and finds it.
   */
  private async writeChunkRetrying(
    orgId: number,
    chunk: Row[],
    input: BatchCreate,
    knownLists: Set<number>,
    result: BatchResult,
    plan: { lookFirst: boolean },
  ): Promise<void> {
    for (let conflicts = 0; ;) {
      const before = { ...result, errors: [...result.errors], unconfirmed: [...result.unconfirmed] };
      try {
        return await this.writeChunk(orgId, chunk, input, knownLists, result, plan.lookFirst);
      } catch (err) {
        Object.assign(result, before);
        if (err instanceof ListsGone) {
          for (const id of err.ids) knownLists.delete(id);
          continue;
        }
        if (!isUniqueViolation(err) || (plan.lookFirst && ++conflicts === 3)) throw err;
        plan.lookFirst = true;
      }
    }
  }

  /**
   * The stored rows of these emails, locked on MySQL until the chunk commits, so an update never meets
   * a deleted row. They are locked by primary key, not by the email lookup, which would also lock the
   * gaps of the new emails and block concurrent imports inserting beside them. A locking read returns
   * the rows as committed now; a row deleted in between is then simply new.
   */
  private async lockStored(trx: Knex.Transaction, orgId: number, emails: string[]): Promise<SearchSource[]> {
    const ids = await trx('subscribers').where({ organization_id: orgId }).whereIn('email', emails).pluck('id');
    return this.writer.locked(trx, orgId, ids.map(Number));
  }

  private async writeChunk(
    orgId: number,
    chunk: Row[],
    input: BatchCreate,
    knownLists: Set<number>,
    result: BatchResult,
    lookFirst: boolean,
  ): Promise<void> {
    const usable = chunk.filter((row) => {
      const missing = [...(input.lists ?? []), ...(row.lists ?? [])].find((id) => !knownLists.has(id));
      if (missing === undefined) return true;
      result.errors.push({
        index: row.index,
        email: row.email,
        field: 'lists',
        rule: 'exists',
        message: `List ${missing} does not exist`,
      });
      return false;
    });
    if (!usable.length) return;
    const now = this.clock.now();
    const status = input.skip_confirmation ? 'active' : 'unconfirmed';
    await transactionWithRetry(this.knex, async (trx) => {
      const existing = new Map<string, SearchSource>();
      const stored = lookFirst
        ? await this.lockStored(
            trx,
            orgId,
            usable.map((u) => u.email),
          )
        : [];
      for (const r of stored) existing.set(r.email, r);
      const fresh = usable.filter((r) => !existing.has(r.email));
      const updates = usable.filter((r) => existing.has(r.email));

      const freshIds = await insertRowsReturningIds(trx, 'subscribers', subscriberRows(orgId, status, now, fresh), {
        uniqueColumn: 'email',
        scope: { organization_id: orgId },
      });
      const ids = new Map<string, number>(fresh.map((r, i) => [r.email, freshIds[i]]));
      await insertSearchRows(
        trx,
        orgId,
        fresh.map((r) => ({
          id: ids.get(r.email)!,
          email: r.email,
          status,
          first_name: r.first_name,
          last_name: r.last_name,
          meta_data: r.meta_data,
        })),
      );

      await updateProfiles(
        trx,
        orgId,
        updates.map((r) => ({ stored: existing.get(r.email)!, columns: profileColumns(r) })),
        now,
      );
      for (const r of updates) ids.set(r.email, existing.get(r.email)!.id);
      await replaceSearchRows(
        trx,
        orgId,
        updates.map((r) => existing.get(r.email)!),
        updates.map((r) => withProfile(existing.get(r.email)!, r)),
      );

      // Memberships are only ever added by a batch: request lists for every row, row lists for that row.
      const memberships: Membership[] = [];
      for (const r of usable) {
        const member = { id: ids.get(r.email)!, status: existing.get(r.email)?.status ?? status };
        for (const listId of new Set([...(input.lists ?? []), ...(r.lists ?? [])]))
          memberships.push({ listId, ...member });
      }
      const deltas = await insertMemberships(trx, orgId, memberships, now, new Set(freshIds));

      await this.webhooks.emit(
        trx,
        orgId,
        fresh.map((r) => subscriberCreated({ id: ids.get(r.email)!, email: r.email, status }, now)),
      );

      // Counters last: their rows are shared by every concurrent import and stay locked until commit.
      await adjustStatusCounts(trx, orgId, { [status]: fresh.length }, { kind: 'created', at: now });
      await applyListDeltas(trx, deltas);

      if (status === 'unconfirmed') await recordConfirmationsDue(trx, orgId, freshIds, now);

      result.created += fresh.length;
      result.updated += updates.length;
      if (status === 'unconfirmed') result.unconfirmed.push(...fresh.map((r) => ids.get(r.email)!));
    });
  }
}
