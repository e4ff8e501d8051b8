import { EMAIL_PATTERN } from '@switchboard/core';

/** The environment variables the plugin reads: checked at start-up, and the README's table lists each. */
export const monitorEnvSchema = {
  type: 'object',
  properties: {
    SERVER_MONITOR_API_KEY: {
      type: 'string',
      description:
        'key of the server-monitor routes, their last path segment (unset: generated into DATA_DIR/server-monitor.key when APP_ENV=local, else every route answers 403; staging and production need 24 characters or more)',
    },
    MONITOR_ALERT_FROM: {
      type: 'string',
      pattern: EMAIL_PATTERN,
      description: "sender address of alert mails (default monitor@<PUBLIC_URL's host>, an IP address as [192.0.2.1])",
    },
    MONITOR_ALLOWED_RANGES: {
      type: 'string',
      description:
        'comma-separated CIDR ranges or addresses checks may reach although link-local or a cloud metadata service (unset: none); an entry that cannot be read stops start-up',
    },
    SMS_DRIVER: { enum: ['log', 'http'], description: 'how SMS alerts go: log (default) or http' },
    SMS_URL: { type: 'string', pattern: '^https?://', description: 'SMS_DRIVER=http: a Twilio-compatible API url' },
    SMS_FROM: { type: 'string', description: 'SMS_DRIVER=http: the sender number' },
    SMS_USER: { type: 'string', description: 'SMS_DRIVER=http: Basic auth user (optional)' },
    SMS_PASSWORD: { type: 'string', description: 'SMS_DRIVER=http: Basic auth password (optional)' },
  },
  if: { required: ['SMS_DRIVER'], properties: { SMS_DRIVER: { const: 'http' } } },
  then: { required: ['SMS_URL', 'SMS_FROM'] },
} as const;
