import { ApiGroup, idParams, messageBody, messageEnvelopeSchema } from '@switchboard/core';

export interface DeleteRoute {
  /** e.g. `/lists/:id` */
  path: string;
  /** What the answer names: `List 7 deleted`. */
  thing: string;
  summary: string;
  permission: string;
  remove(organizationId: number, id: number): Promise<void>;
}

/** DELETE of one of the organization's objects by id, answering the spec's `{success, message}`. */
export function deleteRoute(group: ApiGroup, route: DeleteRoute): ApiGroup {
  return group.delete(
    route.path,
    {
      summary: route.summary,
      permission: route.permission,
      params: idParams,
      response: { schema: messageEnvelopeSchema },
    },
    async ({ auth, params }) => {
      await route.remove(auth.organizationId, params.id);
      return messageBody(`${route.thing} ${params.id} deleted`);
    },
  );
}
