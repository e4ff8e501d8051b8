import type { Knex } from 'knex';
import { parseJson, toBool } from '@switchboard/core';
import type { UsersDirectory } from '../shared/users-directory';

export interface Administrator {
  user_id: number;
  email_enabled: boolean;
  sms_enabled: boolean;
}

/** The users-projects role whose users are an organization's administrators, the only ones alerted. */
export const ADMIN_ROLE = 'admin';

export interface Recipient {
  channel: 'email' | 'sms';
  address: string;
}

/**
 * An organization's notification setting. Without one, or with one whose `administrators` was never set
 * (a row written only for `ssl_expiry_days`), every administrator is alerted by e-mail; `[]` alerts none.
 * Users come from users-projects' directory, read on `knex` (the caller's transaction, when it has one).
 */
export async function administratorsOf(
  knex: Knex | Knex.Transaction,
  directory: UsersDirectory,
  organizationId: number,
): Promise<{ administrators: Administrator[]; otherEmails: string[] }> {
  const setting = await knex('monitor_notification_settings')
    .where({ organization_id: organizationId })
    .first('administrators', 'other_emails');
  const otherEmails = parseJson<string[]>(setting?.other_emails, []);
  if (setting?.administrators !== null && setting?.administrators !== undefined)
    return { administrators: parseJson<Administrator[]>(setting.administrators, []), otherEmails };
  const admins = await directory.administrators(organizationId, knex);
  return {
    administrators: admins.map((admin) => ({ user_id: admin.id, email_enabled: true, sms_enabled: false })),
    otherEmails,
  };
}

/**
 * Who an alert goes to, by channel: the administrators' flags, their users' addresses and phones. A listed
 * user is alerted while their role is admin: one demoted since the setting was saved is not (spec §1:
 * alerts go to organization administrators).
 */
export async function recipientsOf(
  knex: Knex | Knex.Transaction,
  directory: UsersDirectory,
  organizationId: number,
): Promise<Recipient[]> {
  const { administrators, otherEmails } = await administratorsOf(knex, directory, organizationId);
  const ids = administrators.filter((a) => a.email_enabled || a.sms_enabled).map((a) => a.user_id);
  const users = await directory.usersOf(organizationId, ids, knex);
  const byId = new Map(users.map((u) => [u.id, u]));
  const recipients: Recipient[] = [];
  for (const a of administrators) {
    const user = byId.get(a.user_id);
    if (user?.role !== ADMIN_ROLE) continue;
    if (toBool(a.email_enabled)) recipients.push({ channel: 'email', address: user.email });
    if (toBool(a.sms_enabled) && user.phone) recipients.push({ channel: 'sms', address: user.phone });
  }
  for (const email of otherEmails) recipients.push({ channel: 'email', address: email });
  const seen = new Set<string>();
  return recipients.filter((r) => !seen.has(`${r.channel}:${r.address}`) && seen.add(`${r.channel}:${r.address}`));
}
