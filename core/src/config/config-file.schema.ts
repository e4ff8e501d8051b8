/** JSON schema of config/switchboard.json. */
const limit = { type: 'integer', minimum: 1 } as const;

export const rateLimitPolicySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['windowSeconds', 'perToken', 'perAddress'],
  properties: {
    windowSeconds: limit,
    perToken: {
      type: 'object',
      additionalProperties: false,
      required: ['overall'],
      properties: { overall: limit, GET: limit, POST: limit, PUT: limit, PATCH: limit, DELETE: limit },
    },
    perAddress: limit,
  },
} as const;

export const configFileSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    plugins: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: {
          package: { type: 'string', minLength: 1 },
          enabled: { type: 'boolean' },
          options: { type: 'object' },
          rateLimits: rateLimitPolicySchema,
        },
      },
    },
    rateLimits: {
      type: 'object',
      additionalProperties: false,
      properties: {
        plans: { type: 'object', additionalProperties: { type: 'number', exclusiveMinimum: 0 } },
        tokens: { type: 'object', additionalProperties: { type: 'number', exclusiveMinimum: 0 } },
      },
    },
    mail: {
      type: 'object',
      additionalProperties: false,
      properties: {
        maxConnections: { type: 'integer', minimum: 1, maximum: 1000 },
        messagesPerSecond: { type: 'number', exclusiveMinimum: 0 },
        sendTimeoutMs: { type: 'integer', minimum: 1000, maximum: 600_000 },
        dkim: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['domain', 'selector', 'privateKeyFile'],
            properties: {
              domain: { type: 'string', minLength: 1 },
              selector: { type: 'string', minLength: 1 },
              privateKeyFile: { type: 'string', minLength: 1 },
            },
          },
        },
      },
    },
    http: {
      type: 'object',
      additionalProperties: false,
      properties: {
        bodyLimit: { type: 'string', pattern: '^[0-9]+(b|kb|mb)$' },
        trustedProxies: { type: 'array', items: { type: 'string' } },
        tokenCacheSeconds: { type: 'integer', minimum: 0 },
        // A timer's longest wait is 2^31 - 1 ms: past it Node fires at once (and warns TimeoutOverflowWarning).
        shutdownTimeoutMs: { type: 'integer', minimum: 0, maximum: 3_600_000 },
      },
    },
  },
} as const;

export interface ConfigFile {
  plugins?: Record<
    string,
    {
      package?: string;
      enabled?: boolean;
      options?: Record<string, unknown>;
      rateLimits?: import('./types').RateLimitPolicy;
    }
  >;
  rateLimits?: { plans?: Record<string, number>; tokens?: Record<string, number> };
  mail?: {
    maxConnections?: number;
    messagesPerSecond?: number;
    sendTimeoutMs?: number;
    dkim?: Array<{ domain: string; selector: string; privateKeyFile: string }>;
  };
  http?: { bodyLimit?: string; trustedProxies?: string[]; tokenCacheSeconds?: number; shutdownTimeoutMs?: number };
}
