import {
  entryOf,
  contentHash,
  isObject,
  jsonBody,
  malformed,
  NormalizedEvent,
  ourId,
  ProviderAdapter,
  text,
  timeOf,
} from '@switchboard/provider-kit';
import { verifySignature } from './signature';

const EVENTS: Record<string, NormalizedEvent['type']> = {
  // SendGrid says processed; the campaign spec names provider_a's sent.
  processed: 'sent',
  sent: 'sent',
  delivered: 'delivered',
  open: 'opened',
  click: 'clicked',
  bounce: 'bounced',
  dropped: 'dropped',
  spamreport: 'complained',
  unsubscribe: 'unsubscribed',
  group_unsubscribe: 'unsubscribed',
};

function normalizeOne(event: unknown, receivedAt: Date): NormalizedEvent | null {
  if (!isObject(event)) throw malformed('Every event must be an object');
  const type = entryOf(EVENTS, event.event);
  // deferred, group_resubscribe and names SendGrid may add: nothing to count.
  if (!type) return null;
  const normalized: NormalizedEvent = {
    type,
    recipient: text(event.email),
    messageId: ourId(event.campaign_message_id),
    subscriberId: ourId(event.campaign_subscriber_id),
    // The part before the first dot is the id SendGrid answered the send with (X-Message-Id).
    providerMessageId: text(event.sg_message_id)?.split('.')[0] ?? null,
    // The Message-ID header of the mail as it reached SendGrid (SMTP relay): ours, which names the mail.
    messageIdHeader: text(event['smtp-id'])?.replace(/^<|>$/g, '') ?? null,
    // SendGrid's id is unique per event; its docs' samples give every event the same placeholder.
    providerEventId: event.sg_event_id ? `${String(event.event)}:${String(event.sg_event_id)}` : contentHash(event),
    occurredAt: timeOf(event.timestamp, receivedAt),
    raw: event,
  };
  if (type === 'bounced') normalized.bounce = event.type === 'blocked' ? 'soft' : 'hard';
  const url = text(event.url);
  return url && type === 'clicked' ? { ...normalized, url } : normalized;
}

/** provider_a: SendGrid's Event Webhook, a JSON array of events signed over timestamp and body. */
const providerA: ProviderAdapter = {
  key: 'provider_a',

  async verify(request, endpoint, context) {
    verifySignature(request, endpoint.secret, context.now());
  },

  normalize(request) {
    const events = jsonBody(request);
    if (!Array.isArray(events)) throw malformed('Expected a JSON array of events');
    const receivedAt = new Date();
    return events.map((event) => normalizeOne(event, receivedAt)).filter((e) => e !== null);
  },

  outgoingHeaders: ({ messageId, subscriberId }) => ({
    'X-SMTPAPI': JSON.stringify({
      unique_args: { campaign_message_id: String(messageId), campaign_subscriber_id: String(subscriberId) },
    }),
  }),
};

export default providerA;
