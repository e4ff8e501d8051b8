import { emailSchema, idSchema, nameSchema, pageQueryProperties, Shape, timestamp, Validated } from '@switchboard/core';

export const ROLES = ['admin', 'member'] as const;
export const PROJECT_STATUSES = ['active', 'archived'] as const;

// Not blank (a name of spaces alone was taken); a phone holds a digit (`---` was one).
const name = nameSchema;
const email = emailSchema;
const phone = {
  type: ['string', 'null'],
  pattern: '^\\+?[ ()./-]*[0-9][0-9 ()./-]*$',
  minLength: 3,
  maxLength: 32,
} as const;

export const userSchema = {
  type: 'object',
  required: ['id', 'name', 'email', 'role', 'phone', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    email: { type: 'string' },
    role: { enum: ROLES },
    phone: { type: ['string', 'null'] },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const projectSchema = {
  type: 'object',
  required: ['id', 'name', 'description', 'owner_id', 'status', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    owner_id: { type: ['integer', 'null'], description: 'null once the owning user is deleted' },
    status: { enum: PROJECT_STATUSES },
    created_at: timestamp,
    updated_at: timestamp,
  },
} as const;

export const createUserBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'email'],
  properties: { name, email, role: { enum: ROLES, default: 'member' }, phone },
} as const;

export const updateUserBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { name, email, role: { enum: ROLES }, phone },
} as const;

export const listUsersQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    role: { enum: ROLES },
    search: { type: 'string', minLength: 1, maxLength: 191, description: 'part of the name or email' },
  },
} as const;

export const createProjectBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'owner_id'],
  properties: {
    name,
    description: { type: ['string', 'null'], maxLength: 10000 },
    owner_id: idSchema,
    status: { enum: PROJECT_STATUSES, default: 'active' },
  },
} as const;

export const listProjectsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...pageQueryProperties,
    status: { enum: PROJECT_STATUSES },
    owner_id: idSchema,
  },
} as const;

/** Request and response shapes, derived from the schemas above: one definition gives both. */
export type User = Shape<typeof userSchema>;
export type Project = Shape<typeof projectSchema>;
export type NewUser = Validated<typeof createUserBody>;
export type UserChanges = Validated<typeof updateUserBody>;
export type UserListQuery = Validated<typeof listUsersQuery>;
export type NewProject = Validated<typeof createProjectBody>;
export type ProjectListQuery = Validated<typeof listProjectsQuery>;
