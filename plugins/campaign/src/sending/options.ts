/** The campaign plugin's options for sending (`plugins.campaign.options.sending` in config/switchboard.json). */
export interface SendingOptions {
  /** A send pauses once this share of its tried recipients failed for good... */
  pauseFailureRate: number;
  /** ...after at least this many were tried. */
  pauseMinimumTried: number;
}

export const SENDING_OPTIONS = Symbol('campaign.sendingOptions');

export const sendingOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    pauseFailureRate: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 0.5 },
    pauseMinimumTried: { type: 'integer', minimum: 1, default: 100 },
  },
} as const;
