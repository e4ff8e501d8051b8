import type { Metrics } from './daily-metrics';

/** The daily metrics analytics keeps per organization (docs/decisions.md, Analytics). */
export const METRIC = {
  /** Subscribers created (any status): a new subscriber. */
  newSubscribers: 'subscribers.new',
  /** The net change of a status's count: created, deleted and moved subscribers. */
  statusNet: (status: string) => `status.${status}`,
  /** Subscribers moved into a status from another (unsubscribes, bounces, confirmations). */
  movedInto: (status: string) => `moved.${status}`,
  /** A message counter's increments: mails sent, delivered, first opens and clicks, bounces... */
  mail: (event: MailEvent) => `mail.${event}`,
  /** Messages whose send finished (test sends aside). */
  messagesSent: 'messages.sent',
  /** First opens by the UTC hour they were counted in. */
  opensInHour: (hour: number) => `opens.h${String(hour).padStart(2, '0')}`,
  /** Subscribers whose latest engagement (a first open or click of a mail) fell on the day. */
  lastEngaged: 'engaged.last',
} as const;

export const MAIL_EVENTS = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed'] as const;
export type MailEvent = (typeof MAIL_EVENTS)[number];

/** The message counter each mail metric follows: opens and clicks by the mails first opened and clicked. */
export const MAIL_COUNTER: Record<MailEvent, string> = {
  sent: 'count_sent',
  delivered: 'count_delivered',
  opened: 'unique_opened',
  clicked: 'unique_clicked',
  bounced: 'count_bounced',
  complained: 'count_complained',
  unsubscribed: 'count_stop',
};
const EVENT_OF_COUNTER = new Map(Object.entries(MAIL_COUNTER).map(([event, column]) => [column, event as MailEvent]));

/** The mail metric a message counter's increment adds to, if any. */
export const mailMetricOf = (counter: string): string | null => {
  const event = EVENT_OF_COUNTER.get(counter);
  return event ? METRIC.mail(event) : null;
};

export type SubscriberChange = 'created' | 'moved' | 'deleted';

/** What a change of status counts adds to the day's figures. */
export function subscriberMetrics(change: SubscriberChange, deltas: Partial<Record<string, number>>): Metrics {
  const metrics: Metrics = {};
  for (const [status, delta] of Object.entries(deltas)) {
    if (!delta) continue;
    metrics[METRIC.statusNet(status)] = delta;
    if (change === 'moved' && delta > 0) metrics[METRIC.movedInto(status)] = delta;
    if (change === 'created') metrics[METRIC.newSubscribers] = (metrics[METRIC.newSubscribers] ?? 0) + delta;
  }
  return metrics;
}
