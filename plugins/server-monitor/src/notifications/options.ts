import { CliError, idOf } from '@switchboard/core';
import type { Administrator } from '../alerts';

type Channels = Pick<Administrator, 'email_enabled' | 'sms_enabled'>;

const CHANNELS = new Map<string, Channels>([
  ['email', { email_enabled: true, sms_enabled: false }],
  ['sms', { email_enabled: false, sms_enabled: true }],
  ['email,sms', { email_enabled: true, sms_enabled: true }],
  ['sms,email', { email_enabled: true, sms_enabled: true }],
  ['none', { email_enabled: false, sms_enabled: false }],
]);

export const SSL_EXPIRY_DAYS_RANGE = { min: 1, max: 365 };

/** Commander collector: each `--admin` given, in order. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** `--admin USER_ID:CHANNELS` values as the spec's administrators, in the order given. */
export function administratorsOption(values: string[]): Administrator[] {
  const administrators: Administrator[] = [];
  for (const value of values) {
    const parts = value.split(':');
    const userId = parts.length === 2 ? idOf(parts[0]) : null;
    const flags = parts.length === 2 ? CHANNELS.get(parts[1].toLowerCase()) : undefined;
    if (userId === null || !flags)
      throw new CliError(
        `--admin must be USER_ID:CHANNELS with CHANNELS email, sms, email,sms or none (got "${value}")`,
      );
    if (administrators.some((a) => a.user_id === userId)) throw new CliError(`--admin names user ${userId} twice`);
    administrators.push({ user_id: userId, ...flags });
  }
  return administrators;
}

export function sslExpiryDaysOption(value: string): number {
  const days = /^[0-9]+$/.test(value) ? Number(value) : NaN;
  const { min, max } = SSL_EXPIRY_DAYS_RANGE;
  if (!(days >= min && days <= max))
    throw new CliError(`--ssl-expiry-days must be a whole number from ${min} to ${max}`);
  return days;
}
