import { MAX_SEND_LISTS } from '../shared/send-limits';
import { SCHEDULE_ZONES } from './zones';
import { idSchema, INT_UNSIGNED_MAX, nullableTimestamp, Shape, timestamp, Validated } from '@switchboard/core';

export const FREQUENCIES = ['weekly', 'daily'] as const;

const properties = {
  message_id: idSchema,
  frequency: { enum: FREQUENCIES },
  send_time: { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM in the timezone' },
  timezone: { type: 'string', enum: SCHEDULE_ZONES, description: 'IANA Region/City, e.g. Europe/Berlin' },
  day_of_week: {
    type: ['integer', 'null'],
    minimum: 0,
    maximum: 6,
    description: '0 = Sunday ... 6 = Saturday; required for weekly',
  },
  max_runs: { type: ['integer', 'null'], minimum: 1, maximum: INT_UNSIGNED_MAX },
  list_ids: {
    type: ['array', 'null'],
    minItems: 1,
    maxItems: MAX_SEND_LISTS,
    uniqueItems: true,
    items: idSchema,
    description: "the lists each run sends to; absent or null: the lists of the message's latest send",
  },
} as const;

export const createScheduleBody = {
  type: 'object',
  additionalProperties: false,
  required: ['message_id', 'frequency', 'send_time', 'timezone'],
  properties,
} as const;

export const updateScheduleBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties,
} as const;

export const listSchedulesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { message_id: idSchema, is_active: { type: 'boolean' } },
} as const;

export const scheduleSchema = {
  type: 'object',
  required: [
    'id',
    'message_id',
    'frequency',
    'send_time',
    'timezone',
    'day_of_week',
    'max_runs',
    'list_ids',
    'is_active',
    'run_count',
    'next_run_at',
    'last_run_at',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'integer' },
    message_id: { type: 'integer' },
    frequency: { enum: FREQUENCIES },
    send_time: { type: 'string' },
    timezone: { type: 'string' },
    day_of_week: { type: ['integer', 'null'] },
    max_runs: { type: ['integer', 'null'] },
    list_ids: { type: ['array', 'null'], items: { type: 'integer' } },
    is_active: { type: 'boolean' },
    run_count: { type: 'integer' },
    next_run_at: nullableTimestamp,
    last_run_at: nullableTimestamp,
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

/** Request and response shapes, derived from the schemas above. */
export type Schedule = Shape<typeof scheduleSchema>;
export type NewSchedule = Validated<typeof createScheduleBody>;
export type ScheduleChanges = Validated<typeof updateScheduleBody>;
export type ScheduleListQuery = Validated<typeof listSchedulesQuery>;
