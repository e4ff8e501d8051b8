import { idParams, PluginApi, PluginContext } from '@switchboard/core';
import { UsersService } from './users-service';
import { ProjectsService } from './projects-service';
import { page, pageSchema, single, singleSchema } from './envelope';
import {
  createProjectBody,
  createUserBody,
  listProjectsQuery,
  listUsersQuery,
  projectSchema,
  updateUserBody,
  userSchema,
} from './schemas';

/** The spec serves `/api/v1` in the local environment and `/v1` in staging and production. */
export const basePath = (appEnv: string) => (appEnv === 'local' ? '/api/v1' : '/v1');

export function registerRoutes(api: PluginApi, ctx: PluginContext): void {
  const users = ctx.container.resolve(UsersService);
  const projects = ctx.container.resolve(ProjectsService);
  const version = ctx.config.version;
  const deletedSchema = singleSchema({
    type: 'object',
    required: ['id', 'deleted'],
    properties: { id: { type: 'integer' }, deleted: { const: true } },
  });
  const group = api.group({ prefix: basePath(ctx.config.appEnv), tag: 'users-projects', auth: 'token' });

  group
    .get(
      '/users',
      {
        summary: 'List users',
        permission: 'users:read',
        query: listUsersQuery,
        response: { schema: pageSchema(userSchema) },
      },
      async ({ auth, query }) => {
        const result = await users.list(auth.organizationId, query);
        return page(result.items, { page: query.page, per_page: query.per_page, total: result.total }, version);
      },
    )
    .get(
      '/users/:id',
      {
        summary: 'Get a user',
        permission: 'users:read',
        params: idParams,
        response: { schema: singleSchema(userSchema) },
      },
      async ({ auth, params }) => single(await users.get(auth.organizationId, params.id), version),
    )
    .post(
      '/users',
      {
        summary: 'Create a user',
        answers: { 409: 'DUPLICATE_ENTRY: a user with this email exists in the organization' },
        permission: 'users:write',
        body: createUserBody,
        trim: ['email'],
        response: { status: 201, schema: singleSchema(userSchema) },
      },
      async ({ auth, body }) => single(await users.create(auth.organizationId, body), version),
    )
    .put(
      '/users/:id',
      {
        summary: 'Update a user (any subset of its fields)',
        answers: { 409: 'DUPLICATE_ENTRY: another user of the organization has this email' },
        permission: 'users:write',
        params: idParams,
        body: updateUserBody,
        trim: ['email'],
        response: { schema: singleSchema(userSchema) },
      },
      async ({ auth, params, body }) => single(await users.update(auth.organizationId, params.id, body), version),
    )
    .delete(
      '/users/:id',
      {
        summary: 'Delete a user (their projects keep existing without an owner)',
        permission: 'users:write',
        params: idParams,
        response: { schema: deletedSchema },
      },
      async ({ auth, params }) => {
        await users.delete(auth.organizationId, params.id);
        return single({ id: params.id, deleted: true }, version);
      },
    );

  group
    .get(
      '/projects',
      {
        summary: 'List projects',
        permission: 'projects:read',
        query: listProjectsQuery,
        response: { schema: pageSchema(projectSchema) },
      },
      async ({ auth, query }) => {
        const result = await projects.list(auth.organizationId, query);
        return page(result.items, { page: query.page, per_page: query.per_page, total: result.total }, version);
      },
    )
    .get(
      '/projects/:id',
      {
        summary: 'Get a project',
        permission: 'projects:read',
        params: idParams,
        response: { schema: singleSchema(projectSchema) },
      },
      async ({ auth, params }) => single(await projects.get(auth.organizationId, params.id), version),
    )
    .post(
      '/projects',
      {
        summary: 'Create a project',
        answers: { 422: 'VALIDATION_ERROR, also when owner_id is not a user of the organization (rule exists)' },
        permission: 'projects:write',
        body: createProjectBody,
        response: { status: 201, schema: singleSchema(projectSchema) },
      },
      async ({ auth, body }) => single(await projects.create(auth.organizationId, body), version),
    );
}
