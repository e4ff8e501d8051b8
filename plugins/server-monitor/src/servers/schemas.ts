import { nameSchema, nullableTimestamp, pageQueryProperties, Shape, timestamp, Validated } from '@switchboard/core';
import { SERVER_STATES } from '../shared/active-servers';

const uptime = {
  type: 'object',
  required: ['last_24h', 'last_7d', 'last_30d', 'calculated_at'],
  description: 'share of checks that were up, percent with three decimals (null: no check in the window)',
  properties: {
    last_24h: { type: ['number', 'null'] },
    last_7d: { type: ['number', 'null'] },
    last_30d: { type: ['number', 'null'] },
    calculated_at: nullableTimestamp,
  },
} as const;

/** A server as lists show it. */
export const serverSchema = {
  type: 'object',
  required: [
    'id',
    'organization_id',
    'title',
    'endpoint',
    'notes',
    'state',
    'status',
    'plan',
    'last_checked_at',
    'response_ms',
    'down_since',
    'paused_at',
    'uptime',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'integer' },
    organization_id: { type: 'integer' },
    title: { type: 'string' },
    endpoint: {
      type: 'string',
      description: 'the monitored URL (a password or secret query value in it, such as ?token=, shown as ***)',
    },
    notes: { type: ['string', 'null'] },
    state: {
      enum: [...SERVER_STATES],
      description: 'pending (never checked), up, down, or paused (nothing checks it)',
    },
    status: {
      type: ['string', 'null'],
      description:
        'the last check\'s answer: an HTTP status code ("200"), timeout, unreachable, or refused (an address checks may not reach)',
    },
    plan: {
      type: 'string',
      description: "the organization's plan: free checks every 5 minutes, paid ones every minute",
    },
    last_checked_at: nullableTimestamp,
    response_ms: { type: ['integer', 'null'], description: "the last check's response time" },
    down_since: { ...nullableTimestamp, description: 'when the outage began (state down)' },
    paused_at: nullableTimestamp,
    uptime,
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

const checkSchema = {
  type: 'object',
  required: ['checked_at', 'up', 'status', 'response_ms', 'error'],
  properties: {
    checked_at: timestamp,
    up: { type: 'boolean' },
    status: { type: 'string' },
    response_ms: { type: ['integer', 'null'] },
    error: { type: ['string', 'null'] },
  },
} as const;
export { checkSchema };

/** One server with what a person looks for: its last error, certificate, heartbeats and status log. */
export const serverDetailSchema = {
  type: 'object',
  required: [...serverSchema.required, 'last_error', 'ssl', 'heartbeats', 'recent_log'],
  properties: {
    ...serverSchema.properties,
    last_error: { type: ['string', 'null'], description: "the last failed check's error" },
    ssl: {
      anyOf: [
        {
          type: 'object',
          required: ['valid_to', 'issuer', 'error', 'checked_at'],
          properties: {
            valid_to: nullableTimestamp,
            issuer: { type: ['string', 'null'] },
            error: { type: ['string', 'null'] },
            checked_at: timestamp,
          },
        },
        { type: 'null' },
      ],
      description: 'the certificate as the last SSL check read it (null: not read yet, or not https)',
    },
    heartbeats: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'state', 'interval_seconds', 'grace_seconds', 'last_ping_at', 'due_at'],
        properties: {
          id: { type: 'integer' },
          state: { enum: ['new', 'up', 'down'], description: 'new (never pinged), up, or down (missing)' },
          interval_seconds: { type: 'integer' },
          grace_seconds: { type: 'integer' },
          last_ping_at: nullableTimestamp,
          due_at: timestamp,
        },
      },
    },
    recent_log: {
      type: 'array',
      description: 'the latest 20 status changes, newest first',
      items: {
        type: 'object',
        required: ['original_status', 'updated_status', 'note', 'created_at'],
        properties: {
          original_status: { type: ['string', 'null'] },
          updated_status: { type: 'string' },
          note: { type: 'string' },
          created_at: timestamp,
        },
      },
    },
  },
} as const;

const endpoint = {
  type: 'string',
  minLength: 8,
  maxLength: 2048,
  pattern: '^[hH][tT][tT][pP][sS]?://[^\\s]+$',
  description: 'an http(s) URL',
} as const;

export const createServerBody = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'endpoint'],
  properties: {
    title: nameSchema,
    endpoint,
    notes: { type: ['string', 'null'], maxLength: 10_000 },
    paused: { type: 'boolean', description: 'true: created paused (nothing checks it)' },
  },
} as const;

export const updateServerBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: createServerBody.properties,
} as const;

export const serverListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    state: { enum: [...SERVER_STATES], description: 'only servers in this state' },
    search: {
      type: 'string',
      minLength: 1,
      maxLength: 191,
      description: 'a part of the title or endpoint (case-insensitive)',
    },
  },
} as const;

export const checkListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: pageQueryProperties,
} as const;

export type Server = Shape<typeof serverSchema>;
export type NewServer = Validated<typeof createServerBody>;
export type ServerChanges = Validated<typeof updateServerBody>;
export type ServerListQuery = Validated<typeof serverListQuery>;
export type CheckListQuery = Validated<typeof checkListQuery>;
