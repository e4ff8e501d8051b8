export const changelogSubscribeBody = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'webhook_url'],
  properties: {
    email: { type: 'string', format: 'email', maxLength: 191 },
    webhook_url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 512 },
  },
} as const;

export const changelogSubscriptionSchema = {
  type: 'object',
  properties: { id: { type: 'integer' }, email: { type: 'string' }, webhook_url: { type: 'string' }, created_at: { type: 'string', format: 'date-time' } },
} as const;
