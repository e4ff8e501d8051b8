import { ApiGroup, idParams, PluginContext } from '@switchboard/core';
import { SchedulesService } from './service';
import { createScheduleBody, listSchedulesQuery, scheduleSchema, updateScheduleBody } from './schemas';
import { envelopes, okSchema } from '../shared/envelope';
import { deleteRoute } from '../shared/delete-route';

export function scheduleRoutes(group: ApiGroup, ctx: PluginContext): void {
  const schedules = ctx.container.resolve(SchedulesService);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);
  const one = okSchema(scheduleSchema);

  group
    .get(
      '/schedules',
      {
        summary: 'List schedules (filters message_id, is_active)',
        permission: 'schedules:read',
        query: listSchedulesQuery,
        response: { schema: okSchema({ type: 'array', items: scheduleSchema }) },
      },
      async ({ auth, query }) => envelope.ok(await schedules.list(auth.organizationId, query)),
    )
    .get(
      '/schedules/:id',
      { summary: 'Get a schedule', permission: 'schedules:read', params: idParams, response: { schema: one } },
      async ({ auth, params }) => envelope.ok(await schedules.get(auth.organizationId, params.id)),
    )
    .post(
      '/schedules',
      {
        summary: 'Create a recurring send; next_run_at is computed in UTC',
        permission: 'schedules:write',
        body: createScheduleBody,
        response: { status: 201, schema: one },
      },
      async ({ auth, body }) => envelope.ok(await schedules.create(auth.organizationId, body)),
    )
    .put(
      '/schedules/:id',
      {
        summary: 'Update a schedule',
        permission: 'schedules:write',
        params: idParams,
        body: updateScheduleBody,
        response: { schema: one },
      },
      async ({ auth, params, body }) => envelope.ok(await schedules.update(auth.organizationId, params.id, body)),
    )
    .post(
      '/schedules/:id/pause',
      {
        summary: 'Pause (is_active false)',
        permission: 'schedules:write',
        params: idParams,
        response: { schema: one },
      },
      async ({ auth, params }) => envelope.ok(await schedules.pause(auth.organizationId, params.id)),
    )
    .post(
      '/schedules/:id/resume',
      {
        summary: 'Resume (is_active true, next_run_at recomputed)',
        permission: 'schedules:write',
        params: idParams,
        response: { schema: one },
      },
      async ({ auth, params }) => envelope.ok(await schedules.resume(auth.organizationId, params.id)),
    );
  deleteRoute(group, {
    path: '/schedules/:id',
    thing: 'Schedule',
    summary: 'Delete a schedule',
    permission: 'schedules:write',
    remove: (organizationId, id) => schedules.delete(organizationId, id),
  });
}
