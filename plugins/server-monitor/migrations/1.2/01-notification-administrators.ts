import type { Knex } from 'knex';
import { alterTableOnce } from '@switchboard/core';

interface Administrator {
  user_id: number;
  email_enabled: boolean;
  sms_enabled: boolean;
}

const parseList = (value: unknown): unknown[] => {
  try {
    const parsed = JSON.parse(String(value ?? '[]'));
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
};
const lower = (value: unknown) => String(value).trim().toLowerCase();

/**
 * Server monitor 1.2: the notification setting becomes the spec's `administrators` array (docs/decisions.md,
 * Server monitor 1.2). Each administrator (users-projects role admin) of the organization gets an entry:
 * e-mail on when the 1.1 list held their address, SMS as the 1.1 flag said. Listed addresses that are no
 * administrator's are kept aside (`other_emails`) and still alerted, so nothing is lost, and the
 * rollback rebuilds the 1.1 list and flag from both.
 */
export async function up(knex: Knex): Promise<void> {
  if (!(await knex.schema.hasColumn('monitor_notification_settings', 'administrators')))
    await alterTableOnce(knex, 'monitor_notification_settings', (t) => {
      t.text('administrators').nullable();
      t.text('other_emails').nullable();
    });
  // Gone once a run killed before it recorded itself had dropped it: what it converted had committed with that drop.
  const converted = !(await knex.schema.hasColumn('monitor_notification_settings', 'emails'));
  const settings = converted
    ? []
    : await knex('monitor_notification_settings').select('organization_id', 'emails', 'sms_enabled');
  for (const s of settings) {
    const listed = new Set(parseList(s.emails).map(lower));
    const admins = await knex('users')
      .where({ organization_id: s.organization_id, role: 'admin' })
      .orderBy('id')
      .select('id', 'email');
    const administrators: Administrator[] = admins.map((u) => ({
      user_id: Number(u.id),
      email_enabled: listed.has(lower(u.email)),
      sms_enabled: Boolean(s.sms_enabled),
    }));
    const adminEmails = new Set(admins.map((u) => lower(u.email)));
    await knex('monitor_notification_settings')
      .where({ organization_id: s.organization_id })
      .update({
        administrators: JSON.stringify(administrators),
        other_emails: JSON.stringify([...listed].filter((e) => !adminEmails.has(e))),
      });
  }
  await alterTableOnce(knex, 'monitor_notification_settings', (t) => {
    t.dropColumn('emails');
    t.dropColumn('sms_enabled');
  });
}

export async function down(knex: Knex): Promise<void> {
  if (!(await knex.schema.hasColumn('monitor_notification_settings', 'emails')))
    await alterTableOnce(knex, 'monitor_notification_settings', (t) => {
      t.text('emails').nullable();
      t.boolean('sms_enabled').notNullable().defaultTo(false);
    });
  const settings = await knex('monitor_notification_settings').select(
    'organization_id',
    'administrators',
    'other_emails',
  );
  for (const s of settings) {
    const administrators = parseList(s.administrators) as Administrator[];
    const ids = administrators.filter((a) => a.email_enabled).map((a) => a.user_id);
    const emails = ids.length ? await knex('users').whereIn('id', ids).orderBy('id').pluck('email') : [];
    await knex('monitor_notification_settings')
      .where({ organization_id: s.organization_id })
      .update({
        emails: JSON.stringify([...emails.map(lower), ...parseList(s.other_emails).map(lower)]),
        sms_enabled: administrators.some((a) => a.sms_enabled),
      });
  }
  await alterTableOnce(knex, 'monitor_notification_settings', (t) => {
    t.dropColumn('administrators');
    t.dropColumn('other_emails');
  });
}
