import { ApiGroup, idParams, PluginContext } from '@switchboard/core';
import { ListsService } from './service';
import { createListBody, listSchema, membershipBody, updateListBody } from './schemas';
import { confirmationSchema, envelopes, okSchema } from '../../shared/envelope';
import { deleteRoute } from '../../shared/delete-route';

export function listRoutes(group: ApiGroup, ctx: PluginContext): void {
  const lists = ctx.container.resolve(ListsService);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);

  group
    .get(
      '/lists',
      {
        summary: 'All lists with their counts',
        permission: 'lists:read',
        response: { schema: okSchema({ type: 'array', items: listSchema }) },
      },
      async ({ auth }) => envelope.ok(await lists.all(auth.organizationId)),
    )
    .get(
      '/lists/:id',
      { summary: 'Get a list', permission: 'lists:read', params: idParams, response: { schema: okSchema(listSchema) } },
      async ({ auth, params }) => envelope.ok(await lists.get(auth.organizationId, params.id)),
    )
    .post(
      '/lists',
      {
        summary: 'Create a list (code unique in the organization)',
        permission: 'lists:write',
        body: createListBody,
        response: { status: 201, schema: okSchema(listSchema) },
      },
      async ({ auth, body }) => envelope.ok(await lists.create(auth.organizationId, body)),
    )
    .put(
      '/lists/:id',
      {
        summary: 'Update a list',
        permission: 'lists:write',
        params: idParams,
        body: updateListBody,
        response: { schema: okSchema(listSchema) },
      },
      async ({ auth, params, body }) => envelope.ok(await lists.update(auth.organizationId, params.id, body)),
    );

  deleteRoute(group, {
    path: '/lists/:id',
    thing: 'List',
    summary: 'Delete a list (its subscribers stay)',
    permission: 'lists:write',
    remove: (organizationId, id) => lists.delete(organizationId, id),
  })
    .post(
      '/lists/:id/subscribers',
      {
        summary: 'Add subscribers to a list',
        permission: 'lists:write',
        params: idParams,
        body: membershipBody,
        response: { schema: confirmationSchema({ type: 'object', properties: { added: { type: 'integer' } } }) },
      },
      async ({ auth, params, body }) => {
        const result = await lists.addSubscribers(auth.organizationId, params.id, body.subscriber_ids);
        return envelope.confirmation(`${result.added} subscribers added to list ${params.id}`, result);
      },
    )
    .delete(
      '/lists/:id/subscribers',
      {
        summary: 'Remove subscribers from a list',
        permission: 'lists:write',
        params: idParams,
        body: membershipBody,
        response: { schema: confirmationSchema({ type: 'object', properties: { removed: { type: 'integer' } } }) },
      },
      async ({ auth, params, body }) => {
        const result = await lists.removeSubscribers(auth.organizationId, params.id, body.subscriber_ids);
        return envelope.confirmation(`${result.removed} subscribers removed from list ${params.id}`, result);
      },
    );
}
