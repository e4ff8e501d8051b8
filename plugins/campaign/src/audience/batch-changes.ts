import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, compileValidator, TOKENS } from '@switchboard/core';
import { normalizeEmail } from './email';
import { SubscriberWriter } from './subscriber-writer';
import { batchUpdateRowSchema, RowError } from './batch-schemas';
import type { SubscriberProfile } from './subscriber-schemas';

const validateRow = compileValidator(batchUpdateRowSchema, 'body');

/** PUT and DELETE /subscribers/batch: many subscribers by id or email, each change on its own. */
@injectable()
export class BatchChanges {
  constructor(
    @inject(TOKENS.Knex) private readonly knex: Knex,
    @inject(SubscriberWriter) private readonly writer: SubscriberWriter,
  ) {}

  async update(orgId: number, raw: object[]): Promise<{ updated: number; failed: number; errors: RowError[] }> {
    const errors: RowError[] = [];
    let updated = 0;
    for (const [index, candidate] of raw.entries()) {
      const given = (candidate as { email?: unknown }).email;
      const email = typeof given === 'string' ? normalizeEmail(given) : null;
      try {
        const row = validateRow<SubscriberProfile & { id?: number; email?: string }>({ ...candidate, ...(email ? { email } : {}) });
        if (row.id === undefined && row.email === undefined) {
          throw new AppError('VALIDATION_ERROR', 'Each row needs an id or an email', { field: 'id', rule: 'required' });
        }
        const id = row.id ?? (await this.idOf(orgId, email!));
        const { id: _id, email: _email, ...profile } = row;
        await this.writer.update(orgId, id, profile);
        updated += 1;
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        errors.push({ index, email, field: err.details?.field ?? 'subscribers', rule: err.details?.rule ?? (err.code === 'RESOURCE_NOT_FOUND' ? 'exists' : 'invalid'), message: err.message });
      }
    }
    return { updated, failed: errors.length, errors };
  }

  async delete(orgId: number, input: { ids?: number[]; emails?: string[] }): Promise<{ deleted: number; not_found: number }> {
    const ids = new Set(input.ids ?? []);
    const emails = (input.emails ?? []).map(normalizeEmail);
    if (emails.length) {
      for (const id of await this.knex('subscribers').where({ organization_id: orgId }).whereIn('email', emails).pluck('id')) ids.add(Number(id));
    }
    const asked = (input.ids?.length ?? 0) + emails.length;
    if (asked > 1000) throw new AppError('VALIDATION_ERROR', 'At most 1000 ids and emails together', { field: 'ids', rule: 'maxItems' });
    const deleted = await this.writer.deleteMany(orgId, [...ids]);
    return { deleted, not_found: asked - deleted };
  }

  private async idOf(orgId: number, email: string): Promise<number> {
    const row = await this.knex('subscribers').where({ organization_id: orgId, email }).first('id');
    if (!row) throw new AppError('RESOURCE_NOT_FOUND', `No subscriber with the email ${email}`, { field: 'email', rule: 'exists' });
    return Number(row.id);
  }
}
