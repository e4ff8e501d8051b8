import {
  ApiGroup,
  idParams,
  linkedEnvelopes,
  objectRoutes,
  pageEnvelopeSchema,
  PluginContext,
} from '@switchboard/core';
import { ServersService } from './service';
import {
  checkListQuery,
  checkSchema,
  createServerBody,
  serverDetailSchema,
  serverListQuery,
  serverSchema,
  updateServerBody,
} from './schemas';

/** The group at `/api/servermonitor/servers`: an organization's servers, by API token (resource `servers`). */
export function serverRoutes(group: ApiGroup, ctx: PluginContext): void {
  const servers = ctx.container.resolve(ServersService);
  const envelope = linkedEnvelopes(ctx.config.version, ctx.config.publicUrl);
  const endpointAnswers = {
    409: 'DUPLICATE_ENTRY: the organization already monitors this endpoint',
    422: 'VALIDATION_ERROR, also when the endpoint is no URL a check may reach (rule monitorable: not a URL, a link-local or cloud metadata address)',
  };

  objectRoutes(group, {
    collection: '',
    thing: 'Server',
    resource: 'servers',
    schema: serverDetailSchema,
    envelope,
    page: {
      summary: 'Servers of the organization, by state and a part of the title or endpoint',
      query: serverListQuery,
      item: serverSchema,
      run: (org, q) => servers.list(org, q),
    },
    get: {
      summary: 'One server: its state, last check, uptime, certificate, heartbeats and recent status changes',
      run: (org, id) => servers.get(org, id),
    },
    create: {
      summary: 'Add a server to monitor (pending until its plan’s next round of checks)',
      answers: endpointAnswers,
      body: createServerBody,
      trim: ['title', 'endpoint'],
      run: async (org, body) => servers.get(org, (await servers.create(org, body)).id),
    },
    update: {
      summary: 'Change a server’s title, endpoint or notes, or pause and resume it',
      answers: endpointAnswers,
      body: updateServerBody,
      trim: ['title', 'endpoint'],
      run: async (org, id, body) => servers.get(org, (await servers.update(org, id, body)).id),
    },
    remove: {
      summary: 'Stop monitoring a server (its check results, log and heartbeats go with it)',
      run: (org, id) => servers.remove(org, id),
    },
  }).get(
    '/:id/checks',
    {
      summary: 'A server’s kept check results, newest first',
      permission: 'servers:read',
      params: idParams,
      query: checkListQuery,
      response: { schema: pageEnvelopeSchema(checkSchema) },
    },
    async ({ auth, params, query, ctx: http }) => {
      const { items, total } = await servers.checks(auth.organizationId, params.id, query);
      return envelope.page(http, items, { total, per_page: query.per_page, current_page: query.page });
    },
  );
}
