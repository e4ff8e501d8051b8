import { definePlugin, Engine, provide } from '@switchboard/core';
import { createTenant, createTestEngine, TestBackend } from '@switchboard/core/testing';
import monitor from '../../index';
import { DirectoryReader, DirectoryUser, USERS_DIRECTORY, UsersDirectory } from '../users-directory';

/** Users no table holds, and the reads server-monitor makes of them (with the knex or transaction given). */
export class StubDirectory implements UsersDirectory {
  readonly users: DirectoryUser[] = [];
  readonly reads: Array<{ method: string; db?: DirectoryReader }> = [];

  async administrators(organizationId: number, db?: DirectoryReader): Promise<DirectoryUser[]> {
    this.reads.push({ method: 'administrators', db });
    return this.users.filter((u) => u.organization_id === organizationId && u.role === 'admin');
  }

  async usersOf(organizationId: number, ids: readonly number[], db?: DirectoryReader): Promise<DirectoryUser[]> {
    this.reads.push({ method: 'usersOf', db });
    return this.users.filter((u) => u.organization_id === organizationId && ids.includes(u.id));
  }

  add(organizationId: number, id: number, role: string, email: string, phone: string | null = null): void {
    this.users.push({ id, organization_id: organizationId, email, phone, role });
  }
}

/**
 * An engine with server-monitor and a plugin providing `directory` as the users directory in place of
 * users-projects, which is not enabled: there is no users table to read.
 */
export function stubbedDirectoryEngine(backend: TestBackend, directory: StubDirectory): Promise<Engine> {
  const stub = definePlugin({
    id: 'stub-directory',
    version: '1.0',
    provides: [provide(USERS_DIRECTORY, () => directory)],
  });
  return createTestEngine(backend, { plugins: [monitor, stub] });
}

/** A new organization's id. */
export const newOrganization = async (engine: Engine): Promise<number> => (await createTenant(engine)).organizationId;
