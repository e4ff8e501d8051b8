import { AppError, definePlugin, idParams, successBody } from '../../src';

/** A tiny plugin that exercises the HTTP core: every kind of success and failure. */
export const probePlugin = definePlugin({
  id: 'probe',
  version: '1.0',
  rateLimits: { windowSeconds: 60, perToken: { overall: 5, POST: 2 }, perAddress: 3 },
  routes(api, ctx) {
    const group = api.group({ pluginId: ctx.id, prefix: '/api/probe', tag: 'probe', auth: 'token' });
    group
      .get('/things/:id', { summary: 'read a thing', permission: 'users:read', params: idParams, response: {} }, async ({ params, auth }) =>
        successBody({ id: params.id, organization_id: auth.organizationId }, ctx.config.version),
      )
      .post(
        '/things',
        {
          summary: 'create a thing',
          permission: 'users:write',
          body: {
            type: 'object',
            additionalProperties: false,
            required: ['email'],
            properties: { email: { type: 'string', format: 'email' }, count: { type: 'integer', minimum: 0, default: 1 } },
          },
          response: { status: 201 },
        },
        async ({ body }) => successBody(body, ctx.config.version),
      )
      .get('/boom', { summary: 'a bug', permission: 'users:read', response: {} }, async () => {
        throw new Error('secret internal detail');
      })
      .get('/slow', { summary: 'a slow request', permission: 'users:read', response: {} }, async () => {
        await new Promise((resolve) => setTimeout(resolve, 300));
        return successBody({ slow: true }, ctx.config.version);
      })
      .get('/quota', { summary: 'a quota', permission: 'users:read', response: {} }, async () => {
        throw new AppError('QUOTA_EXCEEDED', 'Plan allows 10 things');
      });
    api
      .group({ pluginId: ctx.id, prefix: '/api/probe-public', tag: 'probe', auth: 'none', rateLimit: null })
      .get('/ping', { summary: 'public', response: {} }, async () => ({ pong: true }));
  },
});
