import { toBool, toInt } from '@switchboard/core';
import type { MessageContent } from './composer';

/** What a mail is made of: the message's content, its own sender fields and what it tracks. */
export type SendableMessage = MessageContent & {
  from_name: string | null;
  from_email: string | null;
  track_opens: boolean;
  track_clicks: boolean;
};

export const CONTENT_COLUMNS = [
  'id',
  'subject',
  'preheader',
  'content_html',
  'content_text',
  'from_name',
  'from_email',
  'track_opens',
  'track_clicks',
];

export const contentOf = (row: Record<string, unknown>): SendableMessage => ({
  id: toInt(row.id),
  subject: String(row.subject),
  preheader: (row.preheader as string | null) ?? null,
  content_html: (row.content_html as string | null) ?? null,
  content_text: (row.content_text as string | null) ?? null,
  from_name: (row.from_name as string | null) ?? null,
  from_email: (row.from_email as string | null) ?? null,
  track_opens: toBool(row.track_opens),
  track_clicks: toBool(row.track_clicks),
});
