import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  lockedOnMysql,
  rowMapper,
  Clock,
  duplicateEntry,
  insertedId,
  isUniqueViolation,
  notFound,
  ownedRow,
  SERVICES,
  transactionWithRetry,
  validationError,
} from '@switchboard/core';
import { addMemberships, removeMemberships } from './memberships';
import { ListChanges, listSchema, NewList } from './schemas';

const toList = rowMapper(listSchema);

@injectable()
export class ListsService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async all(orgId: number) {
    return (await this.knex('lists').where({ organization_id: orgId }).orderBy('id').select(toList.columns)).map(
      toList,
    );
  }

  async get(orgId: number, id: number) {
    return toList(await ownedRow(this.knex, 'lists', orgId, id, toList.columns, 'List'));
  }

  async create(orgId: number, input: NewList) {
    const now = this.clock.now();
    const id = await this.uniqueCode(async () =>
      insertedId(
        await this.knex('lists').insert({
          organization_id: orgId,
          name: input.name,
          code: input.code,
          description: input.description ?? null,
          created_at: now,
          updated_at: now,
        }),
      ),
    );
    return this.get(orgId, id);
  }

  async update(orgId: number, id: number, input: ListChanges) {
    const updated = await this.uniqueCode(() =>
      this.knex('lists')
        .where({ organization_id: orgId, id })
        .update({ ...input, updated_at: this.clock.now() }),
    );
    if (!updated) throw notFound('List', id);
    return this.get(orgId, id);
  }

  /** The subscribers stay; only their membership goes. */
  async delete(orgId: number, id: number): Promise<void> {
    await transactionWithRetry(this.knex, async (trx) => {
      await this.lockList(trx, orgId, id);
      await trx('list_subscribers').where({ list_id: id }).delete();
      await trx('lists').where({ organization_id: orgId, id }).delete();
    });
  }

  async addSubscribers(orgId: number, id: number, subscriberIds: number[]): Promise<{ added: number }> {
    return transactionWithRetry(this.knex, async (trx) => {
      // The subscribers first, locked, then the list, as every writer of a subscriber takes them: the
      // membership copies the status no other change moves meanwhile (docs/decisions.md, Lists).
      const members = await this.lockedMembers(trx, orgId, subscriberIds);
      await this.lockList(trx, orgId, id);
      if (members.length !== new Set(subscriberIds).size) {
        const found = new Set(members.map((m) => m.id));
        const missing = subscriberIds.find((s) => !found.has(s));
        throw validationError('subscriber_ids', 'exists', `Subscriber ${missing} does not exist`);
      }
      const added = await addMemberships(
        trx,
        orgId,
        id,
        members.map((m) => ({ id: m.id, status: m.status })),
        this.clock.now(),
      );
      return { added };
    });
  }

  async removeSubscribers(orgId: number, id: number, subscriberIds: number[]): Promise<{ removed: number }> {
    return transactionWithRetry(this.knex, async (trx) => {
      await this.lockList(trx, orgId, id);
      return { removed: await removeMemberships(trx, id, subscriberIds) };
    });
  }

  /** The organization's subscribers among the ids with their status, locked on MySQL, in id order. */
  private async lockedMembers(
    trx: Knex.Transaction,
    orgId: number,
    subscriberIds: number[],
  ): Promise<Array<{ id: number; status: string }>> {
    const query = trx('subscribers')
      .where({ organization_id: orgId })
      .whereIn(
        'id',
        [...new Set(subscriberIds)].sort((a, b) => a - b),
      )
      .orderBy('id')
      .select('id', 'status');
    return ((await lockedOnMysql(query)) as Array<{ id: number; status: string }>).map((m) => ({
      id: Number(m.id),
      status: m.status,
    }));
  }

  private async lockList(trx: Knex.Transaction, orgId: number, id: number): Promise<void> {
    if (!(await lockedOnMysql(trx('lists').where({ organization_id: orgId, id }).first('id'))))
      throw notFound('List', id);
  }

  private async uniqueCode<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateEntry('code', 'A list with this code already exists');
      throw err;
    }
  }
}
