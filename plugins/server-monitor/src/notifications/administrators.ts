import type { Knex } from 'knex';
import { AppError } from '@switchboard/core';
import type { Administrator } from '../alerts';
import { ADMIN_ROLE } from '../alerts';
import type { UsersDirectory } from '../shared/users-directory';

const invalid = (message: string) => new AppError('VALIDATION_ERROR', message);

/**
 * Refuses administrators who cannot be alerted as asked: the spec's "organization administrators" are the
 * organization's users of role admin, and SMS needs the user's phone. Users come from users-projects'
 * directory, read in the transaction that writes the setting.
 */
export async function checkAdministrators(
  trx: Knex.Transaction,
  directory: UsersDirectory,
  organizationId: number,
  administrators: Administrator[],
): Promise<void> {
  const users = await directory.usersOf(
    organizationId,
    administrators.map((a) => a.user_id),
    trx,
  );
  const byId = new Map(users.map((u) => [u.id, u]));
  for (const a of administrators) {
    const user = byId.get(a.user_id);
    if (!user) throw invalid(`user ${a.user_id} not found in organization ${organizationId}`);
    if (user.role !== ADMIN_ROLE)
      throw invalid(`user ${a.user_id} is not an administrator (role ${user.role}): alerts go to users of role admin`);
    if (a.sms_enabled && !user.phone) throw invalid(`user ${a.user_id} has no phone number for SMS`);
  }
}
