import { Validated } from '@switchboard/core';

const properties = {
  track_opens: { type: 'boolean', description: 'new messages count opens unless they say otherwise' },
  track_clicks: { type: 'boolean', description: 'new messages count clicks unless they say otherwise' },
} as const;

/** The organization's defaults for new messages (an extra endpoint: docs/decisions.md, Sending). */
export const messageDefaultsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['track_opens', 'track_clicks'],
  properties,
} as const;

export const updateMessageDefaultsBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties,
} as const;

export type MessageDefaults = Validated<typeof messageDefaultsSchema>;
export type MessageDefaultsChanges = Validated<typeof updateMessageDefaultsBody>;
