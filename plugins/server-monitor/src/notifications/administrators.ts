import type { Knex } from 'knex';
import { AppError, toInt } from '@switchboard/core';
import type { Administrator } from '../alerts/recipients';

const invalid = (message: string) => new AppError('VALIDATION_ERROR', message);

/**
 * Refuses administrators who cannot be alerted as asked: the spec's "organization administrators" are the
 * organization's users of role admin, and SMS needs the user's phone.
 */
export async function checkAdministrators(
  trx: Knex.Transaction,
  organizationId: number,
  administrators: Administrator[],
): Promise<void> {
  const ids = administrators.map((a) => a.user_id);
  const users = ids.length
    ? await trx('users').whereIn('id', ids).select('id', 'organization_id', 'role', 'phone')
    : [];
  const byId = new Map(users.map((u: Record<string, unknown>) => [toInt(u.id), u]));
  for (const a of administrators) {
    const user = byId.get(a.user_id);
    if (!user || toInt(user.organization_id) !== organizationId)
      throw invalid(`user ${a.user_id} not found in organization ${organizationId}`);
    if (user.role !== 'admin')
      throw invalid(
        `user ${a.user_id} is not an administrator (role ${String(user.role)}): alerts go to users of role admin`,
      );
    if (a.sms_enabled && !user.phone) throw invalid(`user ${a.user_id} has no phone number for SMS`);
  }
}
