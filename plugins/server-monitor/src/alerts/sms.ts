import type { Logger } from 'pino';
import type { AppConfig } from '@switchboard/core';

/** Sends a text message; the driver is chosen by SMS_DRIVER (docs/operations.md, Server monitor alerts). */
export interface SmsSender {
  send(to: string, text: string): Promise<void>;
}
export const SMS_SENDER = 'servermonitor.SmsSender';

/** The default: the message is written to the log, nothing leaves the machine. */
export const logSms = (logger: Logger): SmsSender => ({
  async send(to, text) {
    logger.info({ sms: { to, text } }, 'SMS (log driver)');
  },
});

/**
 * A Twilio-compatible HTTP API: a form post of To, From and Body to SMS_URL with Basic credentials
 * (SMS_USER, SMS_PASSWORD); any answer but 2xx is a failure, and the alert is tried again.
 */
export function httpSms(options: { url: string; from: string; user?: string; password?: string }): SmsSender {
  return {
    async send(to, text) {
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      if (options.user !== undefined)
        headers.authorization = `Basic ${Buffer.from(`${options.user}:${options.password ?? ''}`).toString('base64')}`;
      const answer = await fetch(options.url, {
        method: 'POST',
        headers,
        body: new URLSearchParams({ To: to, From: options.from, Body: text }).toString(),
        signal: AbortSignal.timeout(10_000),
      });
      await answer.arrayBuffer().catch(() => undefined);
      if (!answer.ok) throw new Error(`SMS API answered ${answer.status}`);
    },
  };
}

export function smsSenderOf(config: AppConfig, logger: Logger): SmsSender {
  const { SMS_DRIVER, SMS_URL, SMS_FROM, SMS_USER, SMS_PASSWORD } = config.env;
  if (SMS_DRIVER === 'http') {
    if (!SMS_URL || !SMS_FROM) throw new Error('SMS_DRIVER=http needs SMS_URL and SMS_FROM');
    return httpSms({ url: SMS_URL, from: SMS_FROM, user: SMS_USER, password: SMS_PASSWORD });
  }
  if (SMS_DRIVER && SMS_DRIVER !== 'log') throw new Error(`SMS_DRIVER must be log or http, got "${SMS_DRIVER}"`);
  return logSms(logger);
}
