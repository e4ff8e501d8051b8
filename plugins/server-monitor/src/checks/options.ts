/** How checks run; plugin options `checks` in config/switchboard.json (docs/operations.md). */
export interface CheckOptions {
  /** Per request, connection included. */
  timeoutMs: number;
  maxRedirections: number;
  /** The pause before a new failure is tried again to confirm it. */
  confirmDelayMs: number;
  /** Checks one worker process runs at once, both tiers together, premium first (places.ts). */
  concurrency: number;
}

export const CHECK_OPTIONS = 'servermonitor.CheckOptions';

export const DEFAULT_CHECK_OPTIONS: CheckOptions = {
  timeoutMs: 10_000,
  maxRedirections: 5,
  confirmDelayMs: 2_000,
  concurrency: 200,
};

export const checkOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    timeoutMs: { type: 'integer', minimum: 100, maximum: 60_000 },
    maxRedirections: { type: 'integer', minimum: 0, maximum: 20 },
    confirmDelayMs: { type: 'integer', minimum: 0, maximum: 60_000 },
    concurrency: { type: 'integer', minimum: 1, maximum: 2_000 },
  },
} as const;
