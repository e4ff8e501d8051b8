import type { ApiGroup, RouteHandler, RouteSpec, Validated } from './api-registry';
import { messageBody } from './envelope';
import { linkedEnvelopes, okEnvelopeSchema as okSchema, pageEnvelopeSchema as pageSchema } from './linked-envelopes';
import { idParams, messageEnvelopeSchema } from '../schemas/common';

interface Action {
  summary: string;
  /** Statuses it answers beyond those of its kind of route (409 for a duplicate ...). */
  answers?: RouteSpec['answers'];
}

interface BodyAction<B> extends Action {
  body: B;
  /** Body fields trimmed of surrounding white space before validation. */
  trim?: string[];
}

/** One kind of object of an organization, reached as `collection/:id`. */
export interface ObjectRoutes<Q, C, U> {
  /** e.g. `/lists` */
  collection: string;
  /** What a delete's answer names: `List 7 deleted`. */
  thing: string;
  /** Its routes need `resource:read` or `resource:write`. */
  resource: string;
  /** The object as a response sends it. */
  schema: object;
  envelope: ReturnType<typeof linkedEnvelopes>;
  /** GET collection: every object of the organization, whole in `data`. */
  list?: Action & { query?: Q; run(organizationId: number, query: Validated<Q>): Promise<unknown[]> };
  /** GET collection: one page of the objects (`item` as a list shows each, the object schema by default). */
  page?: Action & {
    query: Q;
    item?: object;
    run(
      organizationId: number,
      query: Validated<Q>,
    ): Promise<{ items: unknown[]; total: number; capped?: boolean; more?: boolean }>;
  };
  get?: Action & { run(organizationId: number, id: number): Promise<unknown> };
  create?: BodyAction<C> & { run(organizationId: number, body: Validated<C>): Promise<unknown> };
  update?: BodyAction<U> & { run(organizationId: number, id: number, body: Validated<U>): Promise<unknown> };
  remove?: Action & { run(organizationId: number, id: number): Promise<void> };
}

/**
 * The list, GET, POST, PUT and DELETE of one kind of object, in that order, as every campaign object
 * (and a monitored server) answers them: the object in the success envelope (201 on create), lists whole or by page, and
 * `{success, message: "<Thing> <id> deleted"}`.
 */
export function objectRoutes<const Q extends object, const C extends object, const U extends object>(
  group: ApiGroup,
  routes: ObjectRoutes<Q, C, U>,
): ApiGroup {
  const one = `${routes.collection}/:id`;
  const read = `${routes.resource}:read`;
  const write = `${routes.resource}:write`;
  const response = { schema: okSchema(routes.schema) };
  const { envelope, list, page, get, create, update, remove } = routes;
  // The bodies' types come from the callers' schemas (Validated<C>); here they are handed on as they are.
  const handler = (fn: (input: any) => Promise<unknown>) => fn as RouteHandler;
  if (list) {
    group.get(
      routes.collection,
      {
        summary: list.summary,
        answers: list.answers,
        permission: read,
        query: list.query,
        response: { schema: okSchema({ type: 'array', items: routes.schema }) },
      },
      handler(async ({ auth, query }) => envelope.ok(await list.run(auth.organizationId, query))),
    );
  }
  if (page) {
    group.get(
      routes.collection,
      {
        summary: page.summary,
        answers: page.answers,
        permission: read,
        query: page.query,
        response: { schema: pageSchema(page.item ?? routes.schema) },
      },
      handler(async ({ auth, query, ctx }) => {
        const { items, total, capped, more } = await page.run(auth.organizationId, query);
        const info = { total, per_page: query.per_page, current_page: query.page, more };
        return envelope.page(ctx, items, info, capped ? { total_capped: true } : undefined);
      }),
    );
  }
  if (get) {
    group.get(
      one,
      { summary: get.summary, answers: get.answers, permission: read, params: idParams, response },
      handler(async ({ auth, params }) => envelope.ok(await get.run(auth.organizationId, params.id))),
    );
  }
  if (create) {
    group.post(
      routes.collection,
      {
        summary: create.summary,
        answers: create.answers,
        permission: write,
        body: create.body,
        trim: create.trim,
        response: { ...response, status: 201 },
      },
      handler(async ({ auth, body }) => envelope.ok(await create.run(auth.organizationId, body))),
    );
  }
  if (update) {
    group.put(
      one,
      {
        summary: update.summary,
        answers: update.answers,
        permission: write,
        params: idParams,
        body: update.body,
        trim: update.trim,
        response,
      },
      handler(async ({ auth, params, body }) => envelope.ok(await update.run(auth.organizationId, params.id, body))),
    );
  }
  if (remove) {
    group.delete(
      one,
      {
        summary: remove.summary,
        answers: remove.answers,
        permission: write,
        params: idParams,
        response: { schema: messageEnvelopeSchema },
      },
      handler(async ({ auth, params }) => {
        await remove.run(auth.organizationId, params.id);
        return messageBody(`${routes.thing} ${params.id} deleted`);
      }),
    );
  }
  return group;
}
