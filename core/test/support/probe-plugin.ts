import type { Knex } from 'knex';
import { AppError, definePlugin, idParams, SERVICES, successBody } from '../../src';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How many /rows handlers are running, and the pause of each that started, in every probe engine of the process. */
export const rowsHandlers = { running: 0, started: [] as number[] };

/** How many /slow handlers have started, in every probe engine of the process. */
export const slowHandlers = { started: 0 };

/** A tiny plugin that exercises the HTTP core: every kind of success and failure. */
export const probePlugin = definePlugin({
  id: 'probe',
  version: '1.0',
  resources: ['things', 'gadgets'],
  rateLimits: { windowSeconds: 60, perToken: { overall: 5, POST: 2 }, perAddress: 3 },
  routes(api, ctx) {
    const group = api.group({ prefix: '/api/probe', tag: 'probe', auth: 'token' });
    group
      .get(
        '/things/:id',
        { summary: 'read a thing', permission: 'things:read', params: idParams, response: {} },
        async ({ params, auth }) =>
          successBody({ id: params.id, organization_id: auth.organizationId }, ctx.config.version),
      )
      .post(
        '/things',
        {
          summary: 'create a thing',
          permission: 'things:write',
          body: {
            type: 'object',
            additionalProperties: false,
            required: ['email'],
            properties: {
              email: { type: 'string', format: 'email' },
              count: { type: 'integer', minimum: 0, default: 1 },
            },
          },
          response: { status: 201 },
        },
        async ({ body }) => successBody(body, ctx.config.version),
      )
      .get('/boom', { summary: 'a bug', permission: 'things:read', response: {} }, async () => {
        throw new Error('secret internal detail');
      })
      .get('/database-gone', { summary: 'the database out of reach', permission: 'things:read', response: {} }, () => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED', fatal: true });
      })
      .get('/slow', { summary: 'a slow request', permission: 'things:read', response: {} }, async () => {
        slowHandlers.started++;
        await new Promise((resolve) => setTimeout(resolve, 300));
        return successBody({ slow: true }, ctx.config.version);
      })
      .get(
        '/drift/:id',
        {
          summary: 'a body that drifts from its schema (id 1: a wrong type, id 2: an undocumented member)',
          permission: 'things:read',
          params: idParams,
          response: { schema: { type: 'object', properties: { n: { type: 'integer' } } } },
        },
        async ({ params }) => (params.id === 1 ? { n: 'one' } : params.id === 2 ? { n: 2, secret: true } : { n: 3 }),
      )
      .get('/quota', { summary: 'a quota', permission: 'things:read', response: {} }, async () => {
        throw new AppError('QUOTA_EXCEEDED', 'Plan allows 10 things');
      })
      .get(
        '/duplicates/:id',
        {
          summary: 'a 409 its spec names',
          permission: 'things:read',
          params: idParams,
          answers: { 409: 'DUPLICATE_ENTRY: the thing exists' },
          response: {},
        },
        async () => {
          throw new AppError('DUPLICATE_ENTRY', 'The thing exists');
        },
      )
      .get(
        '/gone',
        { summary: 'a status it does not document', permission: 'things:read', response: {} },
        async ({ ctx: http }) => {
          http.state.responseStatus = 410;
          return { gone: true };
        },
      )
      .get(
        '/rows/:id',
        { summary: 'a query, after a pause of id ms', permission: 'things:read', params: idParams, response: {} },
        async ({ params, auth }) => {
          rowsHandlers.running += 1;
          rowsHandlers.started.push(params.id);
          try {
            await pause(params.id);
            const knex = ctx.container.resolve<Knex>(SERVICES.Knex);
            const row = await knex('organizations').where({ id: auth.organizationId }).first('id');
            return successBody({ organization_id: Number(row.id) }, ctx.config.version);
          } finally {
            rowsHandlers.running -= 1;
          }
        },
      );
    api
      .group({ prefix: '/api/probe-public', tag: 'probe', auth: 'none', rateLimit: null })
      .get('/ping', { summary: 'public', response: {} }, async () => ({ pong: true }));
    api
      .group({
        prefix: '/api/probe-own-errors',
        tag: 'probe',
        auth: 'none',
        rateLimit: null,
        renderError: (err) => ({ status: err.status, body: { failed: err.code } }),
      })
      .get('/ping', { summary: 'a group that renders its own error body', response: {} }, async () => ({ pong: true }));
  },
});
