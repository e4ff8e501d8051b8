import {
  entryOf,
  isObject,
  jsonBody,
  malformed,
  NormalizedEvent,
  ourId,
  ProviderAdapter,
  ProviderError,
  InboundRequest,
  text,
  timeOf,
} from '@switchboard/provider-kit';
import { isSnsUrl, verifySnsSignature } from './sns-signature';

type Kind = Pick<NormalizedEvent, 'type' | 'bounce'>;
const KINDS: Record<string, Kind> = {
  Send: { type: 'sent' },
  Delivery: { type: 'delivered' },
  Open: { type: 'opened' },
  Click: { type: 'clicked' },
  Complaint: { type: 'complained' },
  Reject: { type: 'dropped' },
  'Rendering Failure': { type: 'dropped' },
};

function envelopeOf(request: InboundRequest): Record<string, unknown> {
  const envelope = jsonBody(request);
  if (!isObject(envelope) || typeof envelope.Type !== 'string') throw malformed('Expected an SNS message');
  return envelope;
}

const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const addresses = (recipients: unknown) =>
  listOf(recipients).map((r) => (isObject(r) ? text(r.emailAddress) : text(r)));

/**
 * The event's kind: a permanent bounce is hard, a transient or undetermined one soft. A complaint whose
 * feedback type is `not-spam` is the reporter taking a complaint back: nothing to count.
 */
function kindOf(type: string, event: Record<string, unknown>): Kind | undefined {
  if (type === 'Complaint' && isObject(event.complaint) && event.complaint.complaintFeedbackType === 'not-spam')
    return undefined;
  if (type !== 'Bounce') return entryOf(KINDS, type);
  const bounce = isObject(event.bounce) ? event.bounce : {};
  return { type: 'bounced', bounce: bounce.bounceType === 'Permanent' ? 'hard' : 'soft' };
}

/** The recipients an event is about: the bounced or complaining ones, else the delivery's, else the mail's. */
function recipientsOf(event: Record<string, unknown>, mail: Record<string, unknown>): Array<string | null> {
  const part = (name: string) => (isObject(event[name]) ? (event[name] as Record<string, unknown>) : {});
  const listed =
    addresses(part('bounce').bouncedRecipients).length > 0
      ? addresses(part('bounce').bouncedRecipients)
      : addresses(part('complaint').complainedRecipients).length > 0
        ? addresses(part('complaint').complainedRecipients)
        : addresses(part('delivery').recipients);
  return listed.length ? listed : addresses(mail.destination).length ? addresses(mail.destination) : [null];
}

/** provider_d: Amazon SES events published through an SNS topic, each SNS message signed by AWS. */
const providerD: ProviderAdapter = {
  key: 'provider_d',

  async verify(request, endpoint, context) {
    await verifySnsSignature(envelopeOf(request), endpoint, context);
  },

  normalize(request) {
    const envelope = envelopeOf(request);
    const message = envelope.Message;
    // Confirmations, and SES's plain-text "Successfully validated SNS topic..." notification, carry no event.
    if (envelope.Type !== 'Notification' || typeof message !== 'string' || !message.trim().startsWith('{')) return [];
    let event: unknown;
    try {
      event = JSON.parse(message);
    } catch {
      throw malformed('The SNS Message is not JSON');
    }
    if (!isObject(event) || !isObject(event.mail)) throw malformed('Expected an SES event with its mail');
    const type = String(event.eventType ?? event.notificationType);
    const kind = kindOf(type, event);
    if (!kind) return [];
    const mail = event.mail;
    const tags = isObject(mail.tags) ? mail.tags : {};
    const tag = (name: string) => listOf(tags[name])[0];
    const detail = isObject(event[type.toLowerCase()]) ? (event[type.toLowerCase()] as Record<string, unknown>) : {};
    const messageId = text(envelope.MessageId);
    if (!messageId) throw malformed('The SNS message has no MessageId');
    return recipientsOf(event, mail).map((recipient, i) => ({
      ...kind,
      recipient,
      messageId: ourId(tag('campaign_message_id')),
      subscriberId: ourId(tag('campaign_subscriber_id')),
      providerMessageId: text(mail.messageId),
      // SNS retries with the same MessageId; one event per recipient of it.
      providerEventId: `${messageId}:${i}`,
      occurredAt: timeOf(detail.timestamp ?? mail.timestamp, new Date()),
      ...(kind.type === 'clicked' && text(detail.link) ? { url: text(detail.link)! } : {}),
      raw: event,
    }));
  },

  outgoingHeaders: ({ messageId, subscriberId }) => ({
    'X-SES-MESSAGE-TAGS': `campaign_message_id=${messageId}, campaign_subscriber_id=${subscriberId}`,
  }),

  subscriptionUrl: (request) => subscribeUrlToConfirm(request),
};

/**
 * The SubscribeURL of a SubscriptionConfirmation, to confirm by a GET, when it is Amazon's own; null for
 * other messages. A confirmation pointing anywhere else is refused.
 */
export function subscribeUrlToConfirm(request: InboundRequest): string | null {
  const envelope = envelopeOf(request);
  if (envelope.Type !== 'SubscriptionConfirmation') return null;
  if (!isSnsUrl(envelope.SubscribeURL)) throw new ProviderError('forbidden', 'SubscribeURL is not Amazon SNS');
  return envelope.SubscribeURL;
}

export default providerD;
