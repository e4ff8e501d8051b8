import type { Command } from 'commander';
import { CliError, idOf, printResult } from '@switchboard/core';
import type { PluginContext } from '@switchboard/core';
import { asCliError } from '../shared/cli';
import { NotificationSetting, NotificationSettingService } from './setting-service';
import { administratorsOption, collect, SSL_EXPIRY_DAYS_RANGE, sslExpiryDaysOption } from './options';

const channelsOf = (a: { email_enabled: boolean; sms_enabled: boolean }): string =>
  [a.email_enabled && 'email', a.sms_enabled && 'sms'].filter(Boolean).join(', ') || 'none';

function describeSetting(s: NotificationSetting): string {
  const administrators = s.every_admin_by_email
    ? 'Administrators: not set, so every administrator (role admin) is alerted by e-mail (the default)'
    : `Administrators:${s.administrators.length ? '' : ' none'}`;
  return [
    `Organization ${s.organization_id}`,
    administrators,
    ...s.administrators.map(
      (a) =>
        `  user ${a.user_id} ${a.email ?? '(not found)'}, ${a.phone ?? 'no phone'}: ${channelsOf(a)}${
          a.alerted ? '' : ' (not alerted: no administrator now)'
        }`,
    ),
    `Other e-mails: ${s.other_emails.join(', ') || 'none'}`,
    `SSL expiry alert: ${s.ssl_expiry_days} days before`,
  ].join('\n');
}

/** `servermonitor:notifications --organization ID [--admin USER_ID:CHANNELS ...] [--ssl-expiry-days N]` */
export function notificationCommands(program: Command, context: () => Promise<PluginContext>): void {
  program
    .command('servermonitor:notifications')
    .description("print an organization's alert setting, or set its administrators' channels and SSL threshold")
    .requiredOption('--organization <id>', 'the organization')
    .option(
      '--admin <user_id:channels>',
      'an administrator and channels: email, sms, email,sms or none (repeatable; replaces the whole list)',
      collect,
    )
    .option(
      '--ssl-expiry-days <days>',
      `alert when a certificate expires within this many days (${SSL_EXPIRY_DAYS_RANGE.min}-${SSL_EXPIRY_DAYS_RANGE.max})`,
    )
    .option('--json', 'print one JSON object')
    .action(async (o: { organization: string; admin?: string[]; sslExpiryDays?: string; json?: boolean }) => {
      const organization = idOf(o.organization);
      if (organization === null) throw new CliError('--organization must be an organization id');
      const administrators = o.admin && administratorsOption(o.admin);
      const sslExpiryDays = o.sslExpiryDays === undefined ? undefined : sslExpiryDaysOption(o.sslExpiryDays);
      const settings = (await context()).container.resolve(NotificationSettingService);
      const setting = await (
        administrators || sslExpiryDays !== undefined
          ? settings.update(organization, { administrators, sslExpiryDays })
          : settings.read(organization)
      ).catch(asCliError);
      printResult(o.json, setting, describeSetting(setting));
    });
}
