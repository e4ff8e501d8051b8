import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, compileValidator, loadOnFirstUse, SERVICES } from '@switchboard/core';
import { normalizeEmail } from '../../shared/email';
import { assertMetaDataFits } from '../../shared/meta-data';
import { SubscriberWriter } from '../subscribers';
import {
  BatchDelete,
  BatchDeleteResult,
  BatchOutcome,
  BatchUpdateRow,
  batchUpdateRowSchema,
  RowError,
} from './schemas';
import type { SubscriberProfile } from '../subscribers';

const validateRow = loadOnFirstUse(() => compileValidator(batchUpdateRowSchema, 'body'));

interface UpdateRow {
  index: number;
  /** The row's email, normalized (null when the row names an id only or gives no text). */
  email: string | null;
  id?: number;
  profile: SubscriberProfile;
}

/** PUT and DELETE /subscribers/batch: many subscribers by id or email, each change on its own. */
@injectable()
export class BatchChanges {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SubscriberWriter) private readonly writer: SubscriberWriter,
  ) {}

  /**
   * Rows are checked one by one (shape, a known id or email, existing lists, each subscriber once),
   * then all changes are written in one transaction.
   */
  async update(orgId: number, raw: object[]): Promise<BatchOutcome> {
    const errors: RowError[] = [];
    const fail = (index: number, email: string | null, field: string, rule: string, message: string) =>
      errors.push({ index, email, field, rule, message });
    const rows: UpdateRow[] = [];
    raw.forEach((candidate, index) => {
      const given = (candidate as { email?: unknown }).email;
      const email = typeof given === 'string' ? normalizeEmail(given) : null;
      try {
        const row = validateRow()<BatchUpdateRow>({ ...candidate, ...(email ? { email } : {}) });
        if (row.id === undefined && row.email === undefined) {
          throw new AppError('VALIDATION_ERROR', 'Each row needs an id or an email', { field: 'id', rule: 'required' });
        }
        assertMetaDataFits(row.meta_data);
        const { id, email: _email, ...profile } = row;
        // As PUT /subscribers/{id}: a row whose members are all unknown (a `status` column, say) changes
        // nothing, and says so, rather than counting as updated (session 27).
        if (!Object.keys(profile).length)
          throw new AppError('VALIDATION_ERROR', 'The row names no field to update', {
            field: 'subscribers',
            rule: 'minProperties',
          });
        rows.push({ index, email, id, profile });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        fail(index, email, err.details?.field ?? 'subscribers', err.details?.rule ?? 'invalid', err.message);
      }
    });

    const idsByEmail = await this.idsOf(
      orgId,
      rows.filter((r) => r.id === undefined).map((r) => r.email!),
    );
    const lists = await this.writer.existingLists(
      this.knex,
      orgId,
      rows.flatMap((r) => r.profile.lists ?? []),
    );
    const seen = new Set<number>();
    const changes: Array<{ id: number; profile: SubscriberProfile; row: UpdateRow }> = [];
    for (const row of rows) {
      const id = row.id ?? idsByEmail.get(row.email!);
      const missingList = (row.profile.lists ?? []).find((l) => !lists.has(l));
      if (id === undefined) fail(row.index, row.email, 'email', 'exists', `No subscriber with the email ${row.email}`);
      else if (seen.has(id))
        fail(
          row.index,
          row.email,
          row.id !== undefined ? 'id' : 'email',
          'duplicate_in_batch',
          `Subscriber ${id} appears earlier in this batch`,
        );
      else if (missingList !== undefined)
        fail(row.index, row.email, 'lists', 'exists', `List ${missingList} does not exist`);
      else {
        seen.add(id);
        changes.push({ id, profile: row.profile, row });
      }
    }
    const unknown = new Set(await this.writer.updateMany(orgId, changes));
    for (const { id, row } of changes)
      if (unknown.has(id)) fail(row.index, row.email, 'id', 'exists', `Subscriber ${id} not found`);
    errors.sort((a, b) => a.index - b.index);
    return { updated: changes.length - unknown.size, failed: errors.length, errors };
  }

  /**
   * `not_found` counts the ids and emails named (each once) that are no subscriber of the organization: a
   * subscriber named by its id and its email, or twice, is found.
   */
  async delete(orgId: number, input: BatchDelete): Promise<BatchDeleteResult> {
    if ((input.ids?.length ?? 0) + (input.emails?.length ?? 0) > 1000)
      throw new AppError('VALIDATION_ERROR', 'At most 1000 ids and emails together', {
        field: 'ids',
        rule: 'maxItems',
      });
    const named = [...new Set(input.ids ?? [])];
    const emails = [...new Set((input.emails ?? []).map(normalizeEmail))];
    const subscribers = () => this.knex('subscribers').where({ organization_id: orgId });
    const byId = named.length ? (await subscribers().whereIn('id', named).pluck('id')).map(Number) : [];
    const byEmail = emails.length ? (await subscribers().whereIn('email', emails).pluck('id')).map(Number) : [];
    const deleted = await this.writer.deleteMany(orgId, [...new Set([...byId, ...byEmail])]);
    return { deleted, not_found: named.length - byId.length + (emails.length - byEmail.length) };
  }

  private async idsOf(orgId: number, emails: string[]): Promise<Map<string, number>> {
    if (!emails.length) return new Map();
    const rows = (await this.knex('subscribers')
      .where({ organization_id: orgId })
      .whereIn('email', emails)
      .select('id', 'email')) as Array<{ id: number; email: string }>;
    return new Map(rows.map((r) => [r.email, Number(r.id)]));
  }
}
