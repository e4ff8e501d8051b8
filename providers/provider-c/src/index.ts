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
  verifyCredentials,
} from '@switchboard/provider-kit';

const METADATA_HEADER = 'X-PM-Metadata-';
/**
 * Outcomes a mail has once: a hard bounce, a complaint. Not an unsubscribe: a person who came back may leave
 * again through the same old mail, and that must move them again.
 */
const ONCE_A_MAIL = new Set(['bounced:hard', 'complained']);
/** Bounces of the address itself. */
const HARD = new Set(['HardBounce', 'BadEmailAddress', 'ManuallyDeactivated']);
/**
 * Bounces of this mail, hard only when Postmark deactivated the address (`Inactive`). Among them a block
 * (the receiving side refused this mail, its content or the sending IP) and a DMARC rejection (the sender's
 * domain failed its own policy): neither says the address is gone, and a sender's broken DMARC would
 * otherwise mark every recipient of a strict mailbox provider bounced for good.
 */
const SOFT = new Set([
  'SoftBounce',
  'Transient',
  'DnsError',
  'SpamNotification',
  'VirusNotification',
  'Blocked',
  'DMARCPolicy',
]);

/** A record's event in our terms, or null for records that are none (an auto-reply, a resubscribe). */
function typeOf(record: Record<string, unknown>): Pick<NormalizedEvent, 'type' | 'bounce'> | null {
  const kind = record.RecordType;
  if (kind === 'Delivery') return { type: 'delivered' };
  if (kind === 'Open') return { type: 'opened' };
  if (kind === 'Click') return { type: 'clicked' };
  if (kind === 'SpamComplaint') return { type: 'complained' };
  if (kind === 'Bounce') {
    if (record.Type === 'Unsubscribe') return { type: 'unsubscribed' };
    if (record.Type === 'SpamComplaint') return { type: 'complained' };
    if (HARD.has(String(record.Type))) return { type: 'bounced', bounce: 'hard' };
    if (SOFT.has(String(record.Type))) return { type: 'bounced', bounce: record.Inactive === true ? 'hard' : 'soft' };
    return null;
  }
  if (kind === 'SubscriptionChange' && record.SuppressSending === true) {
    const reasons: Record<string, Pick<NormalizedEvent, 'type' | 'bounce'>> = {
      ManualSuppression: { type: 'unsubscribed' },
      HardBounce: { type: 'bounced', bounce: 'hard' },
      SpamComplaint: { type: 'complained' },
    };
    return entryOf(reasons, record.SuppressionReason) ?? null;
  }
  return null;
}

/**
 * A record's event id. Postmark tells one outcome twice: a bounce or complaint that suppresses the address
 * comes again as a SubscriptionChange of the same mail (SuppressionReason HardBounce, SpamComplaint), which
 * has no bounce ID of its own. A mail's hard bounce or complaint is therefore keyed by the mail and its
 * recipient, so whichever record comes second is a repeat (docs/decisions.md, Inbound provider webhooks). Soft bounces, which a mail may have several of, keep their bounce ID; other records without
 * one are told apart by their content.
 */
function eventIdOf(
  record: Record<string, unknown>,
  type: Pick<NormalizedEvent, 'type' | 'bounce'>,
  recipient: string | null,
): string {
  const mail = text(record.MessageID);
  const outcome = type.bounce ? `${type.type}:${type.bounce}` : type.type;
  if (mail && recipient && ONCE_A_MAIL.has(outcome)) return `${outcome}:${mail}:${recipient.toLowerCase()}`;
  return record.ID !== undefined ? `${String(record.RecordType)}:${String(record.ID)}` : contentHash(record);
}

/** provider_c: Postmark's webhooks, one JSON record a request, sent with HTTP Basic credentials. */
const providerC: ProviderAdapter = {
  key: 'provider_c',

  async verify(request, endpoint) {
    verifyCredentials(request, endpoint.secret, ['basic']);
  },

  normalize(request) {
    const record = jsonBody(request);
    if (!isObject(record) || typeof record.RecordType !== 'string') throw malformed('Expected one record');
    const type = typeOf(record);
    if (!type) return [];
    // Keys as Postmark hands them back; the header's name may have reached it capitalized.
    const metadata = Object.fromEntries(
      Object.entries(isObject(record.Metadata) ? record.Metadata : {}).map(([key, value]) => [
        key.toLowerCase(),
        value,
      ]),
    );
    const at = record.DeliveredAt ?? record.BouncedAt ?? record.ReceivedAt ?? record.ChangedAt;
    const recipient = text(record.Email) ?? text(record.Recipient);
    const event: NormalizedEvent = {
      ...type,
      recipient,
      messageId: ourId(metadata.campaign_message_id),
      subscriberId: ourId(metadata.campaign_subscriber_id),
      providerMessageId: text(record.MessageID),
      providerEventId: eventIdOf(record, type, recipient),
      occurredAt: timeOf(at, new Date()),
      raw: record,
    };
    const url = text(record.OriginalLink);
    return [url ? { ...event, url } : event];
  },

  outgoingHeaders: ({ messageId, subscriberId }) => ({
    [`${METADATA_HEADER}campaign_message_id`]: String(messageId),
    [`${METADATA_HEADER}campaign_subscriber_id`]: String(subscriberId),
  }),
};

export default providerC;
