import type { MetaData } from '../../shared/meta-data';
import { parseJson, toInt, toIso, toIsoRequired, toNullableText, toOneOf, toText } from '@switchboard/core';
import { SUBSCRIBER_STATUSES } from '../../shared/subscriber-statuses';
import { LIST_ITEM_FIELDS, Subscriber, SubscriberListItem, SubscriberProfile, subscriberSchema } from './schemas';

export const LIST_COLUMNS: string[] = [...LIST_ITEM_FIELDS];

/** The engagement counters' fields, kept in a row of their own (engagement.ts), joined where read. */
const ENGAGEMENT_FIELDS = new Set(['messages_opened', 'messages_clicked']);

/** Every other field of a subscriber but its lists (read from the memberships) is a column. */
export const DETAIL_COLUMNS: string[] = subscriberSchema.required.filter(
  (field) => field !== 'lists' && !ENGAGEMENT_FIELDS.has(field),
);

type Row = Record<string, unknown>;

export const toListItem = (row: Row, lists: number[]): SubscriberListItem => ({
  id: toInt(row.id),
  email: toText(row.email),
  first_name: toNullableText(row.first_name),
  last_name: toNullableText(row.last_name),
  company_name: toNullableText(row.company_name),
  phone: toNullableText(row.phone),
  job_title: toNullableText(row.job_title),
  status: toOneOf(row.status, SUBSCRIBER_STATUSES),
  lists,
  created_at: toIsoRequired(row.created_at),
  meta_data: parseJson<MetaData>(row.meta_data, {}),
});

export const toDetail = (row: Row, lists: Subscriber['lists']): Subscriber => ({
  ...toListItem(row, []),
  lists,
  confirmed_at: toIso(row.confirmed_at),
  unsubscribed_at: toIso(row.unsubscribed_at),
  messages_received: toInt(row.messages_received),
  messages_opened: toInt(row.messages_opened),
  messages_clicked: toInt(row.messages_clicked),
  updated_at: toIsoRequired(row.updated_at),
});

/** Columns of the profile fields present in the input. */
export function profileColumns(input: SubscriberProfile): Row {
  const columns: Row = {};
  for (const key of ['first_name', 'last_name', 'company_name', 'phone', 'job_title'] as const) {
    if (input[key] !== undefined) columns[key] = input[key];
  }
  if (input.meta_data !== undefined) columns.meta_data = JSON.stringify(input.meta_data);
  return columns;
}
