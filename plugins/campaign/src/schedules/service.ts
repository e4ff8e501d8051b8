import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import {
  rowMapper,
  Clock,
  deleteOwnedRow,
  insertedId,
  ownedRow,
  parseJson,
  SERVICES,
  validationError,
} from '@switchboard/core';
import { assertListsOwned } from '../audience/lists';
import { nextRunAt, Recurrence } from './next-run';
import { isIanaZone } from './zones';
import { NewSchedule, Schedule, ScheduleChanges, ScheduleListQuery, scheduleSchema } from './schemas';

const toSchedule = rowMapper(scheduleSchema, { list_ids: (row) => parseJson<number[] | null>(row.list_ids, null) });
const COLUMNS = [...toSchedule.columns, 'list_ids'];

/** Recurring sends: stores the rule and keeps next_run_at (UTC) computed from it. */
@injectable()
export class SchedulesService {
  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.Clock) private readonly clock: Clock,
  ) {}

  async list(orgId: number, q: ScheduleListQuery) {
    const query = this.knex('message_schedules').where({ organization_id: orgId });
    if (q.message_id !== undefined) query.andWhere({ message_id: q.message_id });
    if (q.is_active !== undefined) query.andWhere({ is_active: q.is_active });
    return (await query.orderBy('id').select(COLUMNS)).map(toSchedule);
  }

  async get(orgId: number, id: number): Promise<Schedule> {
    return toSchedule(await ownedRow(this.knex, 'message_schedules', orgId, id, COLUMNS, 'Schedule'));
  }

  async create(orgId: number, input: NewSchedule) {
    const rule = await this.checked(orgId, input);
    await this.checkLists(orgId, input.list_ids ?? null);
    const now = this.clock.now();
    const id = insertedId(
      await this.knex('message_schedules').insert({
        organization_id: orgId,
        message_id: input.message_id,
        ...rule,
        max_runs: input.max_runs ?? null,
        list_ids: input.list_ids ? JSON.stringify(input.list_ids) : null,
        run_count: 0,
        is_active: true,
        next_run_at: nextRunAt(rule, now),
        created_at: now,
        updated_at: now,
      }),
    );
    return this.get(orgId, id);
  }

  async update(orgId: number, id: number, input: ScheduleChanges) {
    const current = await this.get(orgId, id);
    const rule = await this.checked(orgId, { ...current, ...input });
    await this.checkLists(orgId, input.list_ids !== undefined ? input.list_ids : current.list_ids);
    const maxRuns = input.max_runs !== undefined ? input.max_runs : current.max_runs;
    const listIds = input.list_ids !== undefined ? input.list_ids : current.list_ids;
    const exhausted = maxRuns !== null && current.run_count >= maxRuns;
    const active = current.is_active && !exhausted;
    const now = this.clock.now();
    await this.knex('message_schedules')
      .where({ organization_id: orgId, id })
      .update({
        ...rule,
        message_id: input.message_id ?? current.message_id,
        max_runs: maxRuns,
        list_ids: listIds ? JSON.stringify(listIds) : null,
        is_active: active,
        // The run due keeps its time unless the timing changed: one due and waiting for the message's send
        // to end was dropped by a change of max_runs or lists (session 34).
        ...(active && current.next_run_at && sameTiming(rule, current)
          ? {}
          : { next_run_at: active ? nextRunAt(rule, now) : null }),
        updated_at: now,
      });
    return this.get(orgId, id);
  }

  /** Pause: is_active false and no next run. */
  async pause(orgId: number, id: number) {
    await this.get(orgId, id);
    await this.knex('message_schedules')
      .where({ organization_id: orgId, id })
      .update({ is_active: false, next_run_at: null, updated_at: this.clock.now() });
    return this.get(orgId, id);
  }

  /** Resume: is_active true and the next run computed from now; an active schedule keeps its run due. */
  async resume(orgId: number, id: number) {
    const current = await this.get(orgId, id);
    if (current.is_active && current.next_run_at) return current;
    if (current.max_runs !== null && current.run_count >= current.max_runs) {
      throw validationError(
        'max_runs',
        'exhausted',
        `Schedule ${id} has made its ${current.max_runs} runs; raise max_runs to resume it`,
      );
    }
    const now = this.clock.now();
    await this.knex('message_schedules')
      .where({ organization_id: orgId, id })
      .update({ is_active: true, next_run_at: nextRunAt(current, now), updated_at: now });
    return this.get(orgId, id);
  }

  async delete(orgId: number, id: number): Promise<void> {
    await deleteOwnedRow(this.knex, 'message_schedules', orgId, id, 'Schedule');
  }

  /** A schedule's own lists are the organization's (without them, runs take the message's latest send's). */
  private async checkLists(orgId: number, listIds: number[] | null): Promise<void> {
    if (listIds) await assertListsOwned(this.knex, orgId, listIds);
  }

  private async checked(
    orgId: number,
    input: ScheduleChanges & Pick<Recurrence, 'frequency' | 'send_time' | 'timezone'>,
  ): Promise<Recurrence> {
    if (!isIanaZone(input.timezone)) {
      throw validationError(
        'timezone',
        'iana',
        `timezone "${input.timezone}" is not an IANA time zone name such as Europe/Berlin`,
      );
    }
    if (input.frequency === 'weekly' && (input.day_of_week === undefined || input.day_of_week === null)) {
      throw validationError(
        'day_of_week',
        'required',
        'day_of_week is required for a weekly schedule (0 = Sunday ... 6 = Saturday)',
      );
    }
    if (
      input.message_id !== undefined &&
      !(await this.knex('messages').where({ organization_id: orgId, id: input.message_id }).first('id'))
    ) {
      throw validationError('message_id', 'exists', `Message ${input.message_id} does not exist`);
    }
    return {
      frequency: input.frequency,
      send_time: input.send_time,
      timezone: input.timezone,
      day_of_week: input.frequency === 'weekly' ? input.day_of_week! : null,
    };
  }
}

/** Whether two rules send at the same times. */
const sameTiming = (a: Recurrence, b: Recurrence) =>
  a.frequency === b.frequency &&
  a.send_time === b.send_time &&
  a.timezone === b.timezone &&
  (a.day_of_week ?? null) === (b.day_of_week ?? null);
