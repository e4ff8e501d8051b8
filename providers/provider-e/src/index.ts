import {
  isObject,
  jsonBody,
  malformed,
  NormalizedEvent,
  ourId,
  ProviderAdapter,
  text,
  timeOf,
  verifyMailgunSignature,
} from '@switchboard/provider-kit';

type Kind = Pick<NormalizedEvent, 'type' | 'bounce'>;

/** Brevo's transactional event names, the real variants included; deferred and the rest count nothing. */
const EVENTS: Record<string, Kind> = {
  request: { type: 'sent' },
  sent: { type: 'sent' },
  delivered: { type: 'delivered' },
  opened: { type: 'opened' },
  unique_opened: { type: 'opened' },
  proxy_open: { type: 'opened' },
  unique_proxy_open: { type: 'opened' },
  clicked: { type: 'clicked' },
  click: { type: 'clicked' },
  hard_bounce: { type: 'bounced', bounce: 'hard' },
  soft_bounce: { type: 'bounced', bounce: 'soft' },
  blocked: { type: 'dropped' },
  invalid_email: { type: 'dropped' },
  error: { type: 'dropped' },
  spam: { type: 'complained' },
  complaint: { type: 'complained' },
  unsubscribed: { type: 'unsubscribed' },
};

/** The envelope: `{signature: {timestamp, token, signature}, "event-data": {...}}`. */
function envelopeOf(body: unknown): { signature: Record<string, unknown>; data: Record<string, unknown> } {
  if (!isObject(body) || !isObject(body.signature) || !isObject(body['event-data']))
    throw malformed('Expected {signature, event-data}');
  return { signature: body.signature, data: body['event-data'] };
}

/** Our ids, from the X-Mailin-custom header's JSON as Brevo hands it back. */
function customIds(value: unknown): { messageId: number | null; subscriberId: number | null } {
  let custom: unknown = null;
  try {
    custom = typeof value === 'string' ? JSON.parse(value) : null;
  } catch {
    custom = null;
  }
  const ids = isObject(custom) ? custom : {};
  return { messageId: ourId(ids.campaign_message_id), subscriberId: ourId(ids.campaign_subscriber_id) };
}

/** provider_e: Mailgun's signed webhook envelope carrying a Brevo transactional event. */
const providerE: ProviderAdapter = {
  key: 'provider_e',

  async verify(request, endpoint, context) {
    await verifyMailgunSignature(envelopeOf(jsonBody(request)).signature, endpoint.secret, context);
  },

  normalize(request) {
    const { signature, data } = envelopeOf(jsonBody(request));
    const kind = EVENTS[String(data.event)];
    if (!kind) return [];
    // The token is unique per webhook call; a retry of the same call sends it again.
    const token = text(signature.token);
    if (!token) throw malformed('The signature has no token');
    const event: NormalizedEvent = {
      ...kind,
      recipient: text(data.email),
      ...customIds(data['X-Mailin-custom']),
      providerMessageId: text(data['message-id'])?.replace(/^<|>$/g, '') ?? null,
      providerEventId: token,
      occurredAt:
        typeof data.ts_epoch === 'number' ? new Date(data.ts_epoch) : timeOf(data.ts_event ?? data.ts, new Date()),
      raw: data,
    };
    const url = text(data.link) ?? text(data.URL);
    return [url && kind.type === 'clicked' ? { ...event, url } : event];
  },

  outgoingHeaders: ({ messageId, subscriberId }) => ({
    'X-Mailin-custom': JSON.stringify({
      campaign_message_id: String(messageId),
      campaign_subscriber_id: String(subscriberId),
    }),
  }),
};

export default providerE;
