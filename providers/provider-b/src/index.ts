import {
  entryOf,
  InboundRequest,
  jsonBody,
  MailgunEnvelope,
  mailgunEnvelopeOf,
  malformed,
  mediaType,
  NormalizedEvent,
  ourId,
  ProviderAdapter,
  text,
  timeOf,
  verifyMailgunSignature,
} from '@switchboard/provider-kit';
import { fieldsOf } from './fields';
import { normalizeCurrent } from './current';

/** The legacy webhooks' events; Mailgun reports no soft bounce in them (it retries those itself). */
const EVENTS: Record<string, Pick<NormalizedEvent, 'type' | 'bounce'>> = {
  delivered: { type: 'delivered' },
  opened: { type: 'opened' },
  clicked: { type: 'clicked' },
  bounced: { type: 'bounced', bounce: 'hard' },
  dropped: { type: 'dropped' },
  complained: { type: 'complained' },
  unsubscribed: { type: 'unsubscribed' },
};

/** Today's JSON form (`{signature, "event-data"}`), or null for the legacy fields. */
const currentOf = (request: InboundRequest): MailgunEnvelope | null =>
  mediaType(request) === 'application/json' ? mailgunEnvelopeOf(jsonBody(request)) : null;

/**
 * provider_b: Mailgun's webhooks, signed over their timestamp and token: today's JSON body (`event-data`) and
 * the legacy form fields (urlencoded, multipart or a JSON object of fields).
 */
const providerB: ProviderAdapter = {
  key: 'provider_b',

  async verify(request, endpoint, context) {
    const current = currentOf(request);
    await verifyMailgunSignature(current ? current.signature : await fieldsOf(request), endpoint.secret, context);
  },

  async normalize(request) {
    const current = currentOf(request);
    if (current) return normalizeCurrent(current, new Date());
    const fields = await fieldsOf(request);
    if (!fields.event || !fields.token) throw malformed('Expected the event and token fields');
    const kind = entryOf(EVENTS, fields.event);
    if (!kind) return [];
    const event: NormalizedEvent = {
      ...kind,
      recipient: text(fields.recipient),
      messageId: ourId(fields.campaign_message_id),
      subscriberId: ourId(fields.campaign_subscriber_id),
      // Message-Id with brackets on delivery events, message-id without on opens and clicks.
      providerMessageId: text(fields['Message-Id'] ?? fields['message-id'])?.replace(/^<|>$/g, '') ?? null,
      // One token per webhook call; a retry of the call sends it again.
      providerEventId: fields.token,
      occurredAt: timeOf(fields.timestamp, new Date()),
      raw: fields,
    };
    return [fields.url && kind.type === 'clicked' ? { ...event, url: fields.url } : event];
  },

  outgoingHeaders: ({ messageId, subscriberId }) => ({
    'X-Mailgun-Variables': JSON.stringify({
      campaign_message_id: String(messageId),
      campaign_subscriber_id: String(subscriberId),
    }),
  }),
};

export default providerB;
