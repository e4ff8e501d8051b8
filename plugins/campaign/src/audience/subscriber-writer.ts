import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { Clock, duplicateEntry, insertedId, isUniqueViolation, notFound, TOKENS, transactionWithRetry, validationError } from '@switchboard/core';
import { addMemberships, adjustStatusCounts, ensureStatusCountRows, moveMembershipStatus, removeMemberships } from './counters';
import { normalizeEmail } from './email';
import { metaRows, profileColumns } from './subscriber-rows';
import { writeTokens } from './tokens';
import { insertInChunks } from './insert-chunks';
import type { NewSubscriber, SubscriberProfile } from './subscriber-schemas';

/** The name fields present in the input. */
export const pickNames = (input: SubscriberProfile) => ({
  ...(input.first_name !== undefined ? { first_name: input.first_name } : {}),
  ...(input.last_name !== undefined ? { last_name: input.last_name } : {}),
});

/** Every change to subscribers, each in one transaction that also keeps the counters right. */
@injectable()
export class SubscriberWriter {
  constructor(
    @inject(TOKENS.Knex) private readonly knex: Knex,
    @inject(TOKENS.Clock) private readonly clock: Clock,
  ) {}

  async create(orgId: number, input: NewSubscriber): Promise<{ id: number; email: string; status: string }> {
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
        await this.writeMeta(trx, orgId, id, status, input.meta_data ?? {});
        await writeTokens(trx, orgId, [{ id, email, status, first_name: input.first_name, last_name: input.last_name }]);
        await adjustStatusCounts(trx, orgId, { [status]: 1 });
        for (const listId of input.lists ?? []) await addMemberships(trx, listId, [{ id, status }], now);
        return { id, email, status };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateEntry('email', `A subscriber with the email ${email} already exists`);
      throw err;
    }
  }

  /** `lists` replaces the memberships; `meta_data` replaces the whole object. */
  async update(orgId: number, id: number, input: SubscriberProfile): Promise<void> {
    await transactionWithRetry(this.knex, async (trx) => {
      const current = await trx('subscribers').where({ organization_id: orgId, id }).first('id', 'email', 'status', 'first_name', 'last_name');
      if (!current) throw notFound('Subscriber', id);
      await trx('subscribers').where({ id }).update({ ...profileColumns(input), updated_at: this.clock.now() });
      if (input.first_name !== undefined || input.last_name !== undefined) {
        await writeTokens(trx, orgId, [{ ...current, id, ...pickNames(input) }], true);
      }
      if (input.meta_data !== undefined) {
        await trx('subscriber_meta').where({ subscriber_id: id }).delete();
        await this.writeMeta(trx, orgId, id, current.status, input.meta_data);
      }
      if (input.lists !== undefined) await this.replaceLists(trx, orgId, id, current.status, input.lists);
    });
  }

  async delete(orgId: number, id: number): Promise<void> {
    await ensureStatusCountRows(this.knex, orgId);
    await transactionWithRetry(this.knex, async (trx) => {
      const current = await trx('subscribers').where({ organization_id: orgId, id }).first('id', 'status');
      if (!current) throw notFound('Subscriber', id);
      for (const listId of await trx('list_subscribers').where({ subscriber_id: id }).pluck('list_id')) {
        await removeMemberships(trx, Number(listId), [id]);
      }
      await trx('subscribers').where({ id }).delete();
      await adjustStatusCounts(trx, orgId, { [current.status]: -1 });
    });
  }

  /** Moves a subscriber to a status with its timestamps, counters and list counts. */
  async setStatus(orgId: number, id: number, status: string, extra: Record<string, unknown> = {}): Promise<void> {
    await ensureStatusCountRows(this.knex, orgId);
    await transactionWithRetry(this.knex, async (trx) => {
      const current = await trx('subscribers').where({ organization_id: orgId, id }).first('id', 'status');
      if (!current) throw notFound('Subscriber', id);
      const now = this.clock.now();
      const stamps: Record<string, unknown> = {};
      if (status === 'unsubscribed' && current.status !== 'unsubscribed') stamps.unsubscribed_at = now;
      if (status === 'active' && current.status === 'unconfirmed') stamps.confirmed_at = now;
      await trx('subscribers').where({ id }).update({ status, ...stamps, ...extra, updated_at: now });
      if (current.status !== status) {
        await adjustStatusCounts(trx, orgId, { [current.status]: -1, [status]: 1 });
        await moveMembershipStatus(trx, id, current.status, status);
      }
    });
  }

  private async writeMeta(trx: Knex.Transaction, orgId: number, id: number, status: string, meta: Record<string, string | string[]>): Promise<void> {
    const rows = metaRows(orgId, id, status, meta);
    await insertInChunks(trx, 'subscriber_meta', rows);
  }

  private async replaceLists(trx: Knex.Transaction, orgId: number, id: number, status: string, lists: number[]): Promise<void> {
    await this.assertListsExist(trx, orgId, lists);
    const current = new Set(((await trx('list_subscribers').where({ subscriber_id: id }).pluck('list_id')) as number[]).map(Number));
    const wanted = new Set(lists);
    for (const listId of current) if (!wanted.has(listId)) await removeMemberships(trx, listId, [id]);
    const now = this.clock.now();
    for (const listId of wanted) if (!current.has(listId)) await addMemberships(trx, listId, [{ id, status }], now);
  }

  async assertListsExist(trx: Knex | Knex.Transaction, orgId: number, lists: number[]): Promise<void> {
    if (!lists.length) return;
    const found = new Set(((await trx('lists').where({ organization_id: orgId }).whereIn('id', lists).pluck('id')) as number[]).map(Number));
    const missing = lists.find((id) => !found.has(id));
    if (missing !== undefined) throw validationError('lists', 'exists', `List ${missing} does not exist`);
  }
}
