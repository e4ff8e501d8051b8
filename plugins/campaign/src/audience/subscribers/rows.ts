import { parseJson, toIso } from '@switchboard/core';
import type { MetaData, SubscriberProfile } from './schemas';

export const LIST_COLUMNS = ['id', 'email', 'first_name', 'last_name', 'company_name', 'phone', 'job_title', 'status', 'created_at', 'meta_data'];

export const DETAIL_COLUMNS = [
  ...LIST_COLUMNS,
  'confirmed_at',
  'unsubscribed_at',
  'messages_received',
  'messages_opened',
  'messages_clicked',
  'updated_at',
];

type Row = Record<string, unknown>;

export const toListItem = (row: Row, lists: number[]) => ({
  id: Number(row.id),
  email: row.email as string,
  first_name: (row.first_name as string | null) ?? null,
  last_name: (row.last_name as string | null) ?? null,
  company_name: (row.company_name as string | null) ?? null,
  phone: (row.phone as string | null) ?? null,
  job_title: (row.job_title as string | null) ?? null,
  status: row.status as string,
  lists,
  created_at: toIso(row.created_at)!,
  meta_data: parseJson<MetaData>(row.meta_data, {}),
});

export const toDetail = (row: Row, lists: Array<{ id: number; name: string; code: string }>) => ({
  ...toListItem(row, []),
  lists,
  confirmed_at: toIso(row.confirmed_at),
  unsubscribed_at: toIso(row.unsubscribed_at),
  messages_received: Number(row.messages_received),
  messages_opened: Number(row.messages_opened),
  messages_clicked: Number(row.messages_clicked),
  updated_at: toIso(row.updated_at)!,
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
