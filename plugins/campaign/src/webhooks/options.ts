/** The campaign plugin's options for outbound webhooks (`plugins.campaign.options.webhooks`). */
export interface WebhookOptions {
  /** Deliveries in flight at once (one dispatcher runs at a time across processes). */
  concurrency: number;
  /** A try that has no answer by then fails (and is tried again). */
  timeoutMs: number;
  /** Tries of one delivery before it is given up. */
  maxAttempts: number;
  /** The wait before the second try; it doubles each time up to retryMaxMs, +-20% jitter. */
  retryBaseMs: number;
  retryMaxMs: number;
  /** A subscription is deactivated once this many tries in a row failed... */
  disableAfterFailures: number;
  /** ...over at least this long. */
  disableAfterMs: number;
  /** Finished deliveries are kept this long in the log, then deleted. */
  keepDays: number;
}

export const WEBHOOK_OPTIONS = Symbol('campaign.webhookOptions');

export const webhookOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    concurrency: { type: 'integer', minimum: 1, maximum: 1000, default: 64 },
    timeoutMs: { type: 'integer', minimum: 100, maximum: 60_000, default: 10_000 },
    maxAttempts: { type: 'integer', minimum: 1, maximum: 50, default: 15 },
    retryBaseMs: { type: 'integer', minimum: 1, default: 10_000 },
    retryMaxMs: { type: 'integer', minimum: 1, default: 3_600_000 },
    disableAfterFailures: { type: 'integer', minimum: 1, default: 20 },
    disableAfterMs: { type: 'integer', minimum: 0, default: 86_400_000 },
    keepDays: { type: 'integer', minimum: 1, maximum: 3650, default: 30 },
  },
} as const;
