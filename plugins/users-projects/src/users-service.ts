import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  rowMapper,
  Clock,
  deleteOwnedRow,
  duplicateEntry,
  insertedId,
  isUniqueViolation,
  notFound,
  ownedRow,
  paginate,
  SERVICES,
  whereContains,
} from '@switchboard/core';
import { normalizeUserEmail } from './normalize-email';
import { NewUser, User, UserChanges, UserListQuery, userSchema } from './schemas';

const toUser = rowMapper(userSchema);

/** Users of one organization at a time: every query is scoped by organization_id. */
@injectable()
export class UsersService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async list(orgId: number, q: UserListQuery): Promise<{ items: User[]; total: number }> {
    const filtered = this.knex('users').where({ organization_id: orgId });
    if (q.role) filtered.andWhere({ role: q.role });
    if (q.search) whereContains(filtered, ['name', 'email'], q.search);
    return paginate(filtered, q, toUser.columns, toUser);
  }

  async get(orgId: number, id: number): Promise<User> {
    return toUser(await ownedRow(this.knex, 'users', orgId, id, toUser.columns, 'User'));
  }

  async exists(orgId: number, id: number): Promise<boolean> {
    return !!(await this.knex('users').where({ organization_id: orgId, id }).first('id'));
  }

  async create(orgId: number, input: NewUser): Promise<User> {
    const now = this.clock.now();
    const id = await this.uniqueEmail(async () =>
      insertedId(
        await this.knex('users').insert({
          organization_id: orgId,
          name: input.name,
          email: normalizeUserEmail(input.email),
          role: input.role,
          phone: input.phone ?? null,
          created_at: now,
          updated_at: now,
        }),
      ),
    );
    return this.get(orgId, id);
  }

  async update(orgId: number, id: number, input: UserChanges): Promise<User> {
    const changes: Record<string, unknown> = { ...input, updated_at: this.clock.now() };
    if (input.email !== undefined) changes.email = normalizeUserEmail(input.email);
    const updated = await this.uniqueEmail(() =>
      this.knex('users').where({ organization_id: orgId, id }).update(changes),
    );
    if (!updated) throw notFound('User', id);
    return this.get(orgId, id);
  }

  async delete(orgId: number, id: number): Promise<void> {
    await deleteOwnedRow(this.knex, 'users', orgId, id, 'User');
  }

  private async uniqueEmail<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (isUniqueViolation(err))
        throw duplicateEntry('email', 'A user with this email already exists in the organization');
      throw err;
    }
  }
}
