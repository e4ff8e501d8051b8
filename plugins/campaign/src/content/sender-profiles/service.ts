import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  rowMapper,
  Clock,
  deleteOwnedRow,
  insertedId,
  notFound,
  ownedRow,
  SERVICES,
  transactionWithRetry,
} from '@switchboard/core';
import { NewSenderProfile, SenderProfileChanges, senderProfileSchema } from './schemas';

const toProfile = rowMapper(senderProfileSchema);

/** Sender identities; at most one per organization is the default. */
@injectable()
export class SenderProfilesService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async all(orgId: number) {
    return (
      await this.knex('sender_profiles').where({ organization_id: orgId }).orderBy('id').select(toProfile.columns)
    ).map(toProfile);
  }

  async get(orgId: number, id: number) {
    return toProfile(await ownedRow(this.knex, 'sender_profiles', orgId, id, toProfile.columns, 'Sender profile'));
  }

  /** The organization's default sender, if it has one. */
  async defaultFor(orgId: number) {
    const row = await this.knex('sender_profiles')
      .where({ organization_id: orgId, is_default: true })
      .first(toProfile.columns);
    return row ? toProfile(row) : null;
  }

  async create(orgId: number, input: NewSenderProfile) {
    const now = this.clock.now();
    const id = await transactionWithRetry(this.knex, async (trx) => {
      if (input.is_default) await this.clearDefault(trx, orgId);
      return insertedId(
        await trx('sender_profiles').insert({ ...input, organization_id: orgId, created_at: now, updated_at: now }),
      );
    });
    return this.get(orgId, id);
  }

  async update(orgId: number, id: number, input: SenderProfileChanges) {
    await transactionWithRetry(this.knex, async (trx) => {
      if (!(await trx('sender_profiles').where({ organization_id: orgId, id }).first('id')))
        throw notFound('Sender profile', id);
      if (input.is_default) await this.clearDefault(trx, orgId);
      await trx('sender_profiles')
        .where({ id })
        .update({ ...input, updated_at: this.clock.now() });
    });
    return this.get(orgId, id);
  }

  async delete(orgId: number, id: number): Promise<void> {
    await deleteOwnedRow(this.knex, 'sender_profiles', orgId, id, 'Sender profile');
  }

  private clearDefault(trx: Knex.Transaction, orgId: number) {
    return trx('sender_profiles').where({ organization_id: orgId, is_default: true }).update({ is_default: false });
  }
}
