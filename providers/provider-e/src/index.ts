import {
  entryOf,
  contentHash,
  isObject,
  jsonBody,
  MailgunEnvelope,
  mailgunEnvelopeOf,
  malformed,
  NormalizedEvent,
  ourId,
  ProviderAdapter,
  text,
  timeOf,
  verifyCredentials,
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

/**
 * The two forms: the spec's envelope, `{signature: {timestamp, token, signature}, "event-data": {...}}`, and
 * Brevo's own webhook body, the event's fields at the top level, which Brevo secures with credentials it
 * sends (HTTP Basic, or a bearer token the user sets) rather than a signature. A webhook created with
 * `batched: true` posts up to 500 of Brevo's events at once, as an array of them.
 */
type Form = ({ kind: 'envelope' } & MailgunEnvelope) | { kind: 'native'; events: Array<Record<string, unknown>> };

const isBrevoEvent = (value: unknown): value is Record<string, unknown> =>
  isObject(value) && typeof value.event === 'string' && !('signature' in value);

function formOf(body: unknown): Form {
  const envelope = mailgunEnvelopeOf(body);
  if (envelope) return { kind: 'envelope', ...envelope };
  if (isBrevoEvent(body)) return { kind: 'native', events: [body] };
  if (Array.isArray(body) && body.length && body.every(isBrevoEvent)) return { kind: 'native', events: body };
  throw malformed('Expected {signature, event-data}, a Brevo event, or a batch (array) of Brevo events');
}

/**
 * Brevo's `ts_epoch`, when it is a time at all: milliseconds as its webhooks send it, seconds as its own
 * documentation's examples show (a value under 10^11 ms would be early 1973: it is seconds).
 */
function epochMs(value: unknown): Date | null {
  if (typeof value !== 'number') return null;
  const at = new Date(value < 1e11 ? value * 1000 : value);
  return Number.isNaN(at.getTime()) ? null : at;
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

/** A Brevo event in our terms (none for the names that count nothing), under the given event id. */
function eventOf(data: Record<string, unknown>, providerEventId: string): NormalizedEvent[] {
  const kind = entryOf(EVENTS, data.event);
  if (!kind) return [];
  const event: NormalizedEvent = {
    ...kind,
    recipient: text(data.email),
    ...customIds(data['X-Mailin-custom']),
    providerMessageId: text(data['message-id'])?.replace(/^<|>$/g, '') ?? null,
    providerEventId,
    occurredAt: epochMs(data.ts_epoch) ?? timeOf(data.ts_event ?? data.ts, new Date()),
    raw: data,
  };
  const url = text(data.link) ?? text(data.URL);
  return [url && kind.type === 'clicked' ? { ...event, url } : event];
}

/** provider_e: a Brevo transactional event, in Mailgun's signed envelope (the spec's) or as Brevo sends it. */
const providerE: ProviderAdapter = {
  key: 'provider_e',

  async verify(request, endpoint, context) {
    const form = formOf(jsonBody(request));
    if (form.kind === 'envelope') await verifyMailgunSignature(form.signature, endpoint.secret, context);
    else verifyCredentials(request, endpoint.secret, ['basic', 'bearer']);
  },

  normalize(request) {
    const form = formOf(jsonBody(request));
    // The envelope's token is unique per webhook call, sent again on a retry; Brevo's own event is the same
    // on a retry, so its hash is.
    if (form.kind === 'native') return form.events.flatMap((data) => eventOf(data, contentHash(data)));
    const token = text(form.signature.token);
    if (!token) throw malformed('The signature has no token');
    return eventOf(form.data, token);
  },

  outgoingHeaders: ({ messageId, subscriberId }) => ({
    'X-Mailin-custom': JSON.stringify({
      campaign_message_id: String(messageId),
      campaign_subscriber_id: String(subscriberId),
    }),
  }),
};

export default providerE;
