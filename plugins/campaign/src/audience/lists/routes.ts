import { ApiGroup, idParams, PluginContext } from '@switchboard/core';
import { ListsService } from './service';
import { createListBody, listSchema, membershipBody, updateListBody } from './schemas';
import { confirmationSchema, envelopes } from '../../shared/envelope';
import { objectRoutes } from '@switchboard/core';

export function listRoutes(group: ApiGroup, ctx: PluginContext): void {
  const lists = ctx.container.resolve(ListsService);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);

  objectRoutes(group, {
    collection: '/lists',
    thing: 'List',
    resource: 'lists',
    schema: listSchema,
    envelope,
    list: { summary: 'All lists with their counts', run: (org) => lists.all(org) },
    get: { summary: 'Get a list', run: (org, id) => lists.get(org, id) },
    create: {
      summary: 'Create a list (code unique in the organization)',
      answers: { 409: 'DUPLICATE_ENTRY: a list with this code exists' },
      body: createListBody,
      run: (org, body) => lists.create(org, body),
    },
    update: {
      summary: 'Update a list',
      answers: { 409: 'DUPLICATE_ENTRY: another list has this code' },
      body: updateListBody,
      run: (org, id, body) => lists.update(org, id, body),
    },
    remove: { summary: 'Delete a list (its subscribers stay)', run: (org, id) => lists.delete(org, id) },
  })
    .post(
      '/lists/:id/subscribers',
      {
        summary: 'Add subscribers to a list',
        answers: { 422: 'VALIDATION_ERROR, also when a subscriber id is not of the organization (rule exists)' },
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
