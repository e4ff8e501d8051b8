import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, Clock, SERVICES, toInt, transactionWithRetry } from '@switchboard/core';
import { ADMIN_ROLE, Administrator, administratorsOf } from '../alerts';
import { USERS_DIRECTORY, UsersDirectory } from '../shared/users-directory';
import { checkAdministrators } from './administrators';

/** The column's default (migration 1.1), for an organization without a setting row. */
export const DEFAULT_SSL_EXPIRY_DAYS = 14;

export interface NotificationSetting {
  organization_id: number;
  /** No administrators set: every administrator (role admin) is alerted by e-mail. */
  every_admin_by_email: boolean;
  /** `alerted` false: the user is no administrator now (demoted or removed since), so not alerted. */
  administrators: Array<Administrator & { email: string | null; phone: string | null; alerted: boolean }>;
  other_emails: string[];
  ssl_expiry_days: number;
}

export interface SettingChange {
  /** Replaces the whole list. */
  administrators?: Administrator[];
  sslExpiryDays?: number;
}

/** An organization's notification setting (`monitor_notification_settings`), as alerts read it. */
@injectable()
export class NotificationSettingService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
    @inject(USERS_DIRECTORY.key) private readonly directory: UsersDirectory,
  ) {}

  async read(organizationId: number): Promise<NotificationSetting> {
    await this.requireOrganization(this.knex, organizationId);
    const row = await this.knex('monitor_notification_settings')
      .where({ organization_id: organizationId })
      .first('administrators', 'ssl_expiry_days');
    // The same rule as the alerts: the default list is every administrator by e-mail.
    const { administrators, otherEmails } = await administratorsOf(this.knex, this.directory, organizationId);
    const users = await this.directory.usersOf(
      organizationId,
      administrators.map((a) => a.user_id),
    );
    const byId = new Map(users.map((u) => [u.id, u]));
    return {
      organization_id: organizationId,
      every_admin_by_email: row?.administrators === null || row?.administrators === undefined,
      administrators: administrators.map((a) => ({
        user_id: a.user_id,
        email_enabled: a.email_enabled,
        sms_enabled: a.sms_enabled,
        email: byId.get(a.user_id)?.email ?? null,
        phone: byId.get(a.user_id)?.phone || null,
        alerted: byId.get(a.user_id)?.role === ADMIN_ROLE,
      })),
      other_emails: otherEmails,
      ssl_expiry_days: row ? toInt(row.ssl_expiry_days) : DEFAULT_SSL_EXPIRY_DAYS,
    };
  }

  /** Writes only what is given (the row is created when missing); `other_emails` is left as it is. */
  async update(organizationId: number, change: SettingChange): Promise<NotificationSetting> {
    await transactionWithRetry(this.knex, async (trx) => {
      await this.requireOrganization(trx, organizationId);
      if (change.administrators) await checkAdministrators(trx, this.directory, organizationId, change.administrators);
      const fields = {
        ...(change.administrators && { administrators: JSON.stringify(change.administrators) }),
        ...(change.sslExpiryDays !== undefined && { ssl_expiry_days: change.sslExpiryDays }),
      };
      const now = this.clock.now();
      await trx('monitor_notification_settings')
        .insert({ organization_id: organizationId, ...fields, created_at: now, updated_at: now })
        .onConflict('organization_id')
        .merge([...Object.keys(fields), 'updated_at']);
    });
    return this.read(organizationId);
  }

  private async requireOrganization(knex: Knex | Knex.Transaction, organizationId: number): Promise<void> {
    if (!(await knex('organizations').where({ id: organizationId }).first('id')))
      throw new AppError('RESOURCE_NOT_FOUND', `Organization with ID ${organizationId} not found`);
  }
}
