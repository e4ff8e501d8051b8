import type { EventType } from '@switchboard/provider-kit';

/** Where an event comes from: our sending, a tracked link, our unsubscribe link, or a provider's recorded event. */
export type MailEventSource =
  | { kind: 'send' }
  | { kind: 'tracking' }
  | { kind: 'link' }
  | { kind: 'provider'; provider: string; providerEventId: string };

/**
 * Something that happened to one mail: sent, delivered, opened, clicked, bounced, complained, unsubscribed
 * (or a provider's dropped). The ledger (ledger.ts) is the one place that turns these into counters,
 * statuses, analytics, timelines and webhook events; the rebuilds replay the stored ones (replay.ts).
 */
export interface MailEvent {
  type: EventType;
  organizationId: number;
  /** Null for a provider's event that found no message: recorded, counted nowhere. */
  messageId: number | null;
  subscriberId: number | null;
  /** The mail's send when known (our sends and tracked links); a provider's event names the message only. */
  sendId?: number;
  /** When it happened, as webhooks and timelines tell it. */
  occurredAt: Date;
  source: MailEventSource;
  /** The recipient's address, as webhooks tell it. */
  email?: string | null;
  /** A tracked click's target. */
  url?: string | null;
  bounce?: 'hard' | 'soft' | null;
  /** A test send's mail: counted, not told to webhooks. */
  testMode?: boolean;
}

/** The counters every counted event adds 1 to: its message's, and its subscriber's (campaign spec §6). */
export const COUNTERS: Partial<Record<EventType, { message: string; subscriber?: string }>> = {
  sent: { message: 'count_sent', subscriber: 'messages_received' },
  delivered: { message: 'count_delivered' },
  opened: { message: 'count_read' },
  clicked: { message: 'count_clicked' },
  bounced: { message: 'count_bounced' },
  complained: { message: 'count_complained' },
  unsubscribed: { message: 'count_stop' },
};

/**
 * What a mail's first open or click adds 1 to besides (the unique figures the rates are of): the mark on the
 * recipient's row of its send, the message's unique counter and the subscriber's (messages opened, clicked).
 */
export const FIRSTS = {
  opened: { mark: 'opened_at', message: 'unique_opened', subscriber: 'messages_opened' },
  clicked: { mark: 'clicked_at', message: 'unique_clicked', subscriber: 'messages_clicked' },
} as const;

/**
 * An event as the ledger counted it: every counted event adds to COUNTERS, a mail's first open or click to
 * FIRSTS too, and a click that `opensMail` (the first sign of its mail being opened) to FIRSTS.opened.
 */
export type CountedMailEvent = MailEvent & { first?: boolean; opensMail?: boolean };
