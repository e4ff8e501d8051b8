import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  lockedOnMysql,
  Clock,
  duplicateEntry,
  insertedId,
  isUniqueViolation,
  notFound,
  SERVICES,
  transactionWithRetry,
  validationError,
} from '@switchboard/core';
import {
  addMemberships,
  applyListDeltas,
  deleteMemberships,
  deltaOf,
  insertMemberships,
  Membership,
  moveMembershipStatus,
  removeAllMemberships,
} from '../lists';
import { adjustStatusCounts, ensureStatusCountRows } from './status-counts';
import { subscriberCreated, WebhookOutbox } from '../../webhooks';
import { forgetEngagement } from '../../daily-figures';
import { dropEngagement } from './engagement';
import { updateProfiles } from './profile-updates';
import { normalizeEmail } from '../../shared/email';
import { recordConfirmationsDue } from '../../shared/confirmation-job';
import { profileColumns } from './rows';
import { deleteSearchRows, insertSearchRows, replaceSearchRows, SEARCH_SOURCE_COLUMNS, SearchSource } from '../search';
import type { CreatedSubscriber, NewSubscriber, SubscriberProfile } from './schemas';
import type { SubscriberStatus } from '../../shared/subscriber-statuses';
import { assertMetaDataFits } from '../../shared/meta-data';

/** The name fields present in the input. */
export const pickNames = (input: SubscriberProfile) => ({
  ...(input.first_name !== undefined ? { first_name: input.first_name } : {}),
  ...(input.last_name !== undefined ? { last_name: input.last_name } : {}),
});

/** The search source after a profile update: names and meta_data as given, the rest as stored. */
export const withProfile = (current: SearchSource, input: SubscriberProfile): SearchSource => ({
  ...current,
  ...pickNames(input),
  ...(input.meta_data !== undefined ? { meta_data: input.meta_data } : {}),
});

/** Every change to subscribers, each in one transaction that also keeps the counters right. */
@injectable()
export class SubscriberWriter {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(WebhookOutbox) private readonly webhooks: WebhookOutbox,
  ) {}

  async create(orgId: number, input: NewSubscriber): Promise<Pick<CreatedSubscriber, 'id' | 'email' | 'status'>> {
    assertMetaDataFits(input.meta_data);
    await ensureStatusCountRows(this.knex, orgId);
    const email = normalizeEmail(input.email);
    const status = input.confirmed ? 'active' : 'unconfirmed';
    const now = this.clock.now();
    try {
      return await transactionWithRetry(this.knex, async (trx) => {
        await this.assertListsExist(trx, orgId, input.lists ?? []);
        const id = insertedId(
          await trx('subscribers').insert({
            organization_id: orgId,
            email,
            status,
            confirmed_at: input.confirmed ? now : null,
            created_at: now,
            updated_at: now,
            meta_data: JSON.stringify(input.meta_data ?? {}),
            ...profileColumns(input),
          }),
        );
        await insertSearchRows(trx, orgId, [
          { id, email, status, first_name: input.first_name, last_name: input.last_name, meta_data: input.meta_data },
        ]);
        await adjustStatusCounts(trx, orgId, { [status]: 1 }, { kind: 'created', at: now });
        if (status === 'unconfirmed') await recordConfirmationsDue(trx, orgId, [id], now);
        for (const listId of input.lists ?? []) await addMemberships(trx, orgId, listId, [{ id, status }], now);
        await this.webhooks.emit(trx, orgId, [subscriberCreated({ id, email, status }, now)]);
        return { id, email, status };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateEntry('email', `A subscriber with the email ${email} already exists`);
      throw err;
    }
  }

  /** `lists` replaces the memberships; `meta_data` replaces the whole object. */
  async update(orgId: number, id: number, input: SubscriberProfile): Promise<void> {
    if ((await this.updateMany(orgId, [{ id, profile: input }])).length) throw notFound('Subscriber', id);
  }

  /**
   * Profile changes of many subscribers (each at most once) in one transaction: one upsert per set of
   * given fields, their search rows, their memberships where `lists` is given. Returns the ids that
   * are not the organization's subscribers (nothing changed for them).
   */
  async updateMany(orgId: number, changes: Array<{ id: number; profile: SubscriberProfile }>): Promise<number[]> {
    if (!changes.length) return [];
    for (const c of changes) assertMetaDataFits(c.profile.meta_data);
    await this.assertListsExist(
      this.knex,
      orgId,
      changes.flatMap((c) => c.profile.lists ?? []),
    );
    return transactionWithRetry(this.knex, async (trx) => {
      const stored = new Map(
        (
          await this.locked(
            trx,
            orgId,
            changes.map((c) => c.id),
          )
        ).map((r) => [r.id, r]),
      );
      const found = changes.filter((c) => stored.has(c.id));
      const now = this.clock.now();
      await updateProfiles(
        trx,
        orgId,
        found.map((c) => ({ stored: stored.get(c.id)!, columns: profileColumns(c.profile) })),
        now,
      );
      await replaceSearchRows(
        trx,
        orgId,
        found.map((c) => stored.get(c.id)!),
        found.map((c) => withProfile(stored.get(c.id)!, c.profile)),
      );
      await this.replaceLists(
        trx,
        orgId,
        found
          .filter((c) => c.profile.lists !== undefined)
          .map((c) => ({ ...stored.get(c.id)!, lists: c.profile.lists! })),
        now,
      );
      return changes.filter((c) => !stored.has(c.id)).map((c) => c.id);
    });
  }

  async delete(orgId: number, id: number): Promise<void> {
    if (!(await this.deleteMany(orgId, [id]))) throw notFound('Subscriber', id);
  }

  /**
   * Deletes the organization's subscribers among `ids` (at most a batch's 1000) with their search rows
   * and memberships, and the counters, in one transaction; returns how many there were.
   */
  async deleteMany(orgId: number, ids: number[]): Promise<number> {
    if (!ids.length) return 0;
    await ensureStatusCountRows(this.knex, orgId);
    return transactionWithRetry(this.knex, async (trx) => {
      const rows = await this.locked(trx, orgId, ids);
      if (!rows.length) return 0;
      const gone = rows.map((r) => r.id);
      await removeAllMemberships(trx, gone);
      await deleteSearchRows(trx, orgId, rows);
      await forgetEngagement(trx, orgId, await dropEngagement(trx, gone));
      await trx('subscribers').whereIn('id', gone).delete();
      const byStatus: Record<string, number> = {};
      for (const r of rows) byStatus[r.status] = (byStatus[r.status] ?? 0) - 1;
      await adjustStatusCounts(trx, orgId, byStatus, { kind: 'deleted', at: this.clock.now() });
      return rows.length;
    });
  }

  /** Moves a subscriber to a status with its timestamps, counters and list counts. */
  async setStatus(
    orgId: number,
    id: number,
    status: SubscriberStatus,
    extra: Record<string, unknown> = {},
    /** Runs in the same transaction, told the status the subscriber had. */
    within?: (trx: Knex.Transaction, previous: string) => Promise<void>,
  ): Promise<void> {
    await ensureStatusCountRows(this.knex, orgId);
    await transactionWithRetry(this.knex, async (trx) => {
      const current = await this.current(trx, orgId, id);
      await this.moveStatus(trx, orgId, current, status, extra);
      await within?.(trx, current.status);
    });
  }

  /**
   * Moves a subscriber from `from` to `to` only if it has `from` now, read locked in the move's transaction:
   * the status it has afterwards. A double opt-in confirmation read "unconfirmed", then moved an unsubscribe
   * committed meanwhile back to active on MariaDB (session 34).
   */
  async moveIf(orgId: number, id: number, from: SubscriberStatus, to: SubscriberStatus): Promise<string> {
    await ensureStatusCountRows(this.knex, orgId);
    return transactionWithRetry(this.knex, async (trx) => {
      const current = await this.current(trx, orgId, id);
      if (current.status !== from) return current.status;
      await this.moveStatus(trx, orgId, current, to, {});
      return to;
    });
  }

  /**
   * A status change inside the caller's transaction (a provider's bounce, recorded in the same commit as the
   * event); a subscriber deleted since is left alone. The caller makes the status count rows first
   * (`ensureStatusCountRows`).
   */
  async setStatusWithin(
    trx: Knex.Transaction,
    orgId: number,
    id: number,
    status: SubscriberStatus,
    extra: Record<string, unknown> = {},
  ): Promise<void> {
    const current = await this.stored(trx, orgId, id);
    if (current) await this.moveStatus(trx, orgId, current, status, extra);
  }

  private async moveStatus(
    trx: Knex.Transaction,
    orgId: number,
    current: SearchSource,
    status: SubscriberStatus,
    extra: Record<string, unknown>,
  ): Promise<void> {
    // Already there: the row stays as the move there left it (a second unsubscribe without a reason erased
    // the first one's reason and feedback, session 34).
    if (current.status === status) return;
    const id = current.id;
    const now = this.clock.now();
    const stamps: Record<string, unknown> = {};
    // Kept if already set: unsubscribed, then bounced, then unsubscribed again is still the first day.
    if (status === 'unsubscribed') stamps.unsubscribed_at = trx.raw('coalesce(??, ?)', ['unsubscribed_at', now]);
    if (status === 'active' && current.status === 'unconfirmed') stamps.confirmed_at = now;
    await trx('subscribers')
      .where({ id })
      .update({ status, ...stamps, ...extra, updated_at: now });
    await adjustStatusCounts(trx, orgId, { [current.status]: -1, [status]: 1 }, { kind: 'moved', at: now });
    await replaceSearchRows(trx, orgId, [current], [{ ...current, status }]);
    await moveMembershipStatus(trx, id, current.status, status);
    if (status === 'unsubscribed')
      await this.webhooks.emit(trx, orgId, [
        {
          event: 'subscriber.unsubscribed',
          occurredAt: now,
          data: {
            subscriber_id: id,
            email: current.email,
            previous_status: current.status,
            reason: extra.unsubscribe_reason ?? null,
          },
        },
      ]);
  }

  /** The stored row the search rows were derived from. */
  private async current(trx: Knex.Transaction, orgId: number, id: number): Promise<SearchSource> {
    const row = await this.stored(trx, orgId, id);
    if (!row) throw notFound('Subscriber', id);
    return row;
  }

  /**
   * The row, locked on MySQL: two changes of one subscriber at once (two unsubscribes, an unsubscribe and a
   * delete) must each start from the status the other left, or both move the counters from the same one.
   */
  private async stored(trx: Knex.Transaction, orgId: number, id: number): Promise<SearchSource | undefined> {
    return (await this.locked(trx, orgId, [id]))[0];
  }

  /**
   * The organization's subscribers among `ids` as stored now, locked on MySQL until the transaction
   * ends (record locks by primary key only).
   */
  async locked(trx: Knex.Transaction, orgId: number, ids: number[]): Promise<SearchSource[]> {
    const query = trx('subscribers').where({ organization_id: orgId }).whereIn('id', ids).select(SEARCH_SOURCE_COLUMNS);
    if (!ids.length) return [];
    return (await lockedOnMysql(query)).map((r: SearchSource) => ({
      ...r,
      id: Number(r.id),
    }));
  }

  /** Makes each subscriber's memberships exactly `lists`, with the list counters. */
  private async replaceLists(
    trx: Knex.Transaction,
    orgId: number,
    subscribers: Array<{ id: number; status: string; lists: number[] }>,
    now: Date,
  ): Promise<void> {
    if (!subscribers.length) return;
    const current = new Map<number, Set<number>>();
    for (const m of (await trx('list_subscribers')
      .whereIn(
        'subscriber_id',
        subscribers.map((s) => s.id),
      )
      .select('subscriber_id', 'list_id')) as Array<{ subscriber_id: number; list_id: number }>) {
      const lists =
        current.get(Number(m.subscriber_id)) ??
        current.set(Number(m.subscriber_id), new Set()).get(Number(m.subscriber_id))!;
      lists.add(Number(m.list_id));
    }
    const leaving: Membership[] = [];
    const joining: Membership[] = [];
    for (const s of subscribers) {
      const had = current.get(s.id) ?? new Set<number>();
      const wanted = new Set(s.lists);
      for (const listId of had) if (!wanted.has(listId)) leaving.push({ listId, id: s.id, status: s.status });
      for (const listId of wanted) if (!had.has(listId)) joining.push({ listId, id: s.id, status: s.status });
    }
    const deltas = await insertMemberships(trx, orgId, joining, now);
    for (const [listId, delta] of await deleteMemberships(trx, leaving)) {
      const sum = deltaOf(deltas, listId);
      sum.subscribers += delta.subscribers;
      sum.active += delta.active;
    }
    // One update of all the lists' counters, in id order, as every writer takes the list rows.
    await applyListDeltas(trx, deltas);
  }

  async assertListsExist(trx: Knex | Knex.Transaction, orgId: number, lists: number[]): Promise<void> {
    const found = await this.existingLists(trx, orgId, lists);
    const missing = lists.find((id) => !found.has(id));
    if (missing !== undefined) throw validationError('lists', 'exists', `List ${missing} does not exist`);
  }

  /** Those of the list ids that are lists of the organization. */
  async existingLists(trx: Knex | Knex.Transaction, orgId: number, lists: number[]): Promise<Set<number>> {
    if (!lists.length) return new Set();
    return new Set(
      (
        await trx('lists')
          .where({ organization_id: orgId })
          .whereIn('id', [...new Set(lists)])
          .pluck('id')
      ).map(Number),
    );
  }
}
