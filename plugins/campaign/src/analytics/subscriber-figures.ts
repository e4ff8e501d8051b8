import type { Knex } from 'knex';
import { toInt } from '@switchboard/core';
import { SUBSCRIBER_STATUSES, SubscriberStatus } from '../shared/subscriber-statuses';
import { readDailyMetrics, METRIC } from '../daily-figures';
import { addDays, DayRange, daysOf } from './periods';

export type StatusCounts = Record<SubscriberStatus, number>;

/** The organization's subscribers per status now (the counters every change keeps). */
export async function statusCountsNow(knex: Knex, organizationId: number): Promise<StatusCounts> {
  const counts = Object.fromEntries(SUBSCRIBER_STATUSES.map((s) => [s, 0])) as StatusCounts;
  const rows: Array<Record<string, unknown>> = await knex('subscriber_counts')
    .where('organization_id', organizationId)
    .select('status', 'count');
  for (const r of rows) counts[String(r.status) as SubscriberStatus] = toInt(r.count);
  return counts;
}

/**
 * Each status's count at the end of every day of a range and of the day before it (the range's start):
 * today's counts less the net changes of the days after.
 */
export async function statusCountsByDay(
  knex: Knex,
  organizationId: number,
  range: DayRange,
): Promise<Map<string, StatusCounts>> {
  const counts = await statusCountsNow(knex, organizationId);
  const nets = await readDailyMetrics(
    knex,
    organizationId,
    SUBSCRIBER_STATUSES.map((s) => METRIC.statusNet(s)),
    range.from,
    '9999-12-31',
  );
  const netsOf = new Map<string, Array<{ status: SubscriberStatus; value: number }>>();
  for (const n of nets) {
    const status = n.metric.slice(METRIC.statusNet('').length) as SubscriberStatus;
    (netsOf.get(n.day) ?? netsOf.set(n.day, []).get(n.day)!).push({ status, value: n.value });
  }
  const undo = (day: string) => {
    for (const { status, value } of netsOf.get(day) ?? []) counts[status] -= value;
  };
  // Changes dated after the range (a clock ahead of today) first.
  for (const day of netsOf.keys()) if (day > range.to) undo(day);
  const byDay = new Map<string, StatusCounts>();
  for (const day of daysOf(range).reverse()) {
    byDay.set(day, { ...counts });
    undo(day);
  }
  byDay.set(addDays(range.from, -1), { ...counts });
  return byDay;
}
