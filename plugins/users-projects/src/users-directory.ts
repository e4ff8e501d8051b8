import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { defineService, SERVICES, toInt, toNullableText, toText } from '@switchboard/core';

/** A user as other plugins see it: who they are, where to reach them, what they may do. */
export interface DirectoryUser {
  id: number;
  organization_id: number;
  email: string;
  /** As stored: null or text (users-projects validates the format on write). */
  phone: string | null;
  /** `admin` or `member`. */
  role: string;
}

/** A knex or an open transaction of the caller's: the read runs there (see UsersDirectory). */
export type DirectoryReader = Knex | Knex.Transaction;

/**
 * What users-projects tells other plugins about its users (the service `users.directory`): they inject it
 * and never read its tables. Every read may take the caller's transaction (`db`): it then sees what that
 * transaction sees, and on SQLite (one connection) it is the only way to read while one is open.
 */
export interface UsersDirectory {
  /** The organization's users of role admin, by id. */
  administrators(organizationId: number, db?: DirectoryReader): Promise<DirectoryUser[]>;
  /** Those of `ids` that are users of the organization, by id; ids of nobody there are left out. */
  usersOf(organizationId: number, ids: readonly number[], db?: DirectoryReader): Promise<DirectoryUser[]>;
}

/**
 * The token users-projects provides. A plugin that needs the directory declares its own token of the same
 * name with `defineService<UsersDirectory>` (importing this package's types only), or imports this one.
 */
export const USERS_DIRECTORY = defineService<UsersDirectory>('users.directory', 'users-projects');

const COLUMNS = ['id', 'organization_id', 'email', 'phone', 'role'];

const toDirectoryUser = (row: Record<string, unknown>): DirectoryUser => ({
  id: toInt(row.id),
  organization_id: toInt(row.organization_id),
  email: toText(row.email),
  phone: toNullableText(row.phone),
  role: toText(row.role),
});

@injectable()
export class UsersDirectoryService implements UsersDirectory {
  constructor(@inject(SERVICES.Knex) private readonly knex: Knex) {}

  async administrators(organizationId: number, db: DirectoryReader = this.knex): Promise<DirectoryUser[]> {
    const rows = await db('users')
      .where({ organization_id: organizationId, role: 'admin' })
      .orderBy('id')
      .select(COLUMNS);
    return rows.map(toDirectoryUser);
  }

  async usersOf(
    organizationId: number,
    ids: readonly number[],
    db: DirectoryReader = this.knex,
  ): Promise<DirectoryUser[]> {
    if (!ids.length) return [];
    const rows = await db('users')
      .where({ organization_id: organizationId })
      .whereIn('id', [...new Set(ids)])
      .orderBy('id')
      .select(COLUMNS);
    return rows.map(toDirectoryUser);
  }
}
