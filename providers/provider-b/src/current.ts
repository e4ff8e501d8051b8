import { isObject, MailgunEnvelope, NormalizedEvent, ourId, text, timeOf } from '@switchboard/provider-kit';

type Kind = Pick<NormalizedEvent, 'type' | 'bounce'>;

/**
 * Event names of the current webhooks. `failed` is a hard bounce when permanent; a temporary failure is
 * one attempt Mailgun tries again itself (greylisting, a full mailbox), like SendGrid's and Brevo's
 * `deferred`: nothing to count. Giving up on the address is reported as a permanent failure.
 */
function kindOf(data: Record<string, unknown>): Kind | null {
  switch (data.event) {
    case 'accepted':
      return { type: 'sent' };
    case 'delivered':
    case 'opened':
    case 'clicked':
    case 'complained':
    case 'unsubscribed':
      return { type: data.event };
    case 'failed':
      return data.severity === 'temporary' ? null : { type: 'bounced', bounce: 'hard' };
    // The legacy name in the current envelope: the campaign spec lists `bounced` among provider_b's events.
    case 'bounced':
      return { type: 'bounced', bounce: 'hard' };
    case 'rejected':
      return { type: 'dropped' };
    default:
      return null;
  }
}

/** One event of the current form. Mailgun's event id is the same on every retry of the event. */
export function normalizeCurrent({ signature, data }: MailgunEnvelope, receivedAt: Date): NormalizedEvent[] {
  const kind = kindOf(data);
  if (!kind) return [];
  const variables = isObject(data['user-variables']) ? data['user-variables'] : {};
  const message = isObject(data.message) ? data.message : {};
  const headers = isObject(message.headers) ? message.headers : {};
  const id = text(data.id) ?? text(signature.token);
  const event: NormalizedEvent = {
    ...kind,
    recipient: text(data.recipient),
    messageId: ourId(variables.campaign_message_id),
    subscriberId: ourId(variables.campaign_subscriber_id),
    providerMessageId: text(headers['message-id'])?.replace(/^<|>$/g, '') ?? null,
    providerEventId: `${String(data.event)}:${id}`,
    occurredAt: timeOf(data.timestamp, receivedAt),
    raw: data,
  };
  const url = text(data.url);
  return [url && kind.type === 'clicked' ? { ...event, url } : event];
}
