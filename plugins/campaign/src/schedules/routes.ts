import { ApiGroup, idParams, PluginContext } from '@switchboard/core';
import { SchedulesService } from './service';
import { createScheduleBody, listSchedulesQuery, scheduleSchema, updateScheduleBody } from './schemas';
import { envelopes, okSchema } from '../shared/envelope';
import { objectRoutes } from '@switchboard/core';

/** The 422 rules of a create or update that no schema states. */
const RULES_NO_SCHEMA_STATES =
  "VALIDATION_ERROR, also: a timezone missing from this server's zone data (timezone/iana; a name outside the published list is timezone/enum); a weekly schedule without day_of_week (day_of_week/required); a message or list id not of the organization (message_id/exists, list_ids/exists)";

export function scheduleRoutes(group: ApiGroup, ctx: PluginContext): void {
  const schedules = ctx.container.resolve(SchedulesService);
  const envelope = envelopes(ctx.config.version, ctx.config.publicUrl);

  objectRoutes(group, {
    collection: '/schedules',
    thing: 'Schedule',
    resource: 'schedules',
    schema: scheduleSchema,
    envelope,
    list: {
      summary: 'List schedules (filters message_id, is_active)',
      query: listSchedulesQuery,
      run: (org, query) => schedules.list(org, query),
    },
    get: { summary: 'Get a schedule', run: (org, id) => schedules.get(org, id) },
    create: {
      summary: 'Create a recurring send; next_run_at is computed in UTC',
      answers: {
        422: RULES_NO_SCHEMA_STATES,
      },
      body: createScheduleBody,
      run: (org, body) => schedules.create(org, body),
    },
    update: {
      summary: 'Update a schedule',
      answers: {
        422: RULES_NO_SCHEMA_STATES,
      },
      body: updateScheduleBody,
      run: (org, id, body) => schedules.update(org, id, body),
    },
    remove: { summary: 'Delete a schedule', run: (org, id) => schedules.delete(org, id) },
  });

  // Pause and resume answer the schedule, as its other routes do.
  const transitions = [
    ['pause', 'Pause (is_active false)', (org: number, id: number) => schedules.pause(org, id)],
    [
      'resume',
      'Resume (is_active true, next_run_at recomputed)',
      (org: number, id: number) => schedules.resume(org, id),
    ],
  ] as const;
  for (const [action, summary, run] of transitions) {
    group.post(
      `/schedules/:id/${action}`,
      {
        summary,
        ...(action === 'resume' && {
          answers: { 422: 'VALIDATION_ERROR, also when the schedule made its max_runs runs (max_runs/exhausted)' },
        }),
        permission: 'schedules:write',
        params: idParams,
        response: { schema: okSchema(scheduleSchema) },
      },
      async ({ auth, params }) => envelope.ok(await run(auth.organizationId, params.id)),
    );
  }
}
