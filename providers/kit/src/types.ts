/** What an adapter is given of an inbound webhook request: the raw bytes, as the provider signed them. */
export interface InboundRequest {
  rawBody: Buffer;
  /** Header names in lower case (as Node gives them). */
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, string | undefined>;
}

/** The endpoint a request was sent to: its secret, and options some providers need (an allow-list). */
export interface InboundEndpoint {
  secret: string;
  options?: Record<string, unknown>;
}

/**
 * Remembers one-time tokens: `seen` answers whether the key was seen before, and takes it. The host gives
 * one guard per request to one endpoint and may give its tokens back when the request fails (the
 * provider's retry carries the same token), so an adapter asks it once the signature holds and keeps no
 * token of its own.
 */
export interface ReplayGuard {
  seen(key: string, ttlSeconds: number): Promise<boolean>;
  /**
   * How long a token seen stays remembered by every process that verifies this endpoint's requests,
   * restarts included; left out: as long as `seen` was asked. A scheme whose signature covers no body
   * accepts a timestamp no older than this, or a token forgotten could carry another body.
   */
  readonly rememberedSeconds?: number;
}

/** What verification may need besides the request. */
export interface VerifyContext {
  now(): Date;
  replay: ReplayGuard;
  /** The text of a URL (a signing certificate); adapters that fetch validate the URL first. */
  fetchText?(url: string): Promise<string>;
}

export const EVENT_TYPES = [
  'sent',
  'delivered',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'unsubscribed',
  'dropped',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** One provider event in our terms. */
export interface NormalizedEvent {
  type: EventType;
  /** For bounced: hard (permanent) or soft (temporary, blocked). */
  bounce?: 'hard' | 'soft';
  recipient: string | null;
  /** Our ids, when the mail carried them back (outgoingHeaders). */
  messageId: number | null;
  subscriberId: number | null;
  /** The provider's id of the mail, to match against the one stored at send time. */
  providerMessageId: string | null;
  /** The mail's own Message-ID header as the provider reports it (SendGrid's `smtp-id`), without `<>`. */
  messageIdHeader?: string | null;
  /** The provider's id of this event, or a hash of its content: retries of one event share it. */
  providerEventId: string;
  occurredAt: Date;
  /** For clicked: the link. */
  url?: string;
  /** The provider's own event, as it came. */
  raw: unknown;
}

/** Our ids as outgoing mail carries them. */
export interface OutgoingIds {
  messageId: number;
  subscriberId: number;
}

/**
 * An email provider's inbound webhooks, in three functions. `verify` throws a ProviderError when the
 * request is not the provider's; `normalize` turns a verified request into events (none for a
 * notification that carries no event) and throws a ProviderError('malformed') for a body it cannot read;
 * `outgoingHeaders` are the headers that make the provider hand our ids back with each event.
 */
export interface ProviderAdapter {
  /** The key in webhook URLs: provider_a ... */
  key: string;
  verify(request: InboundRequest, endpoint: InboundEndpoint, context: VerifyContext): Promise<void>;
  /** May be async: some bodies are read as streams (multipart forms). */
  normalize(request: InboundRequest): NormalizedEvent[] | Promise<NormalizedEvent[]>;
  outgoingHeaders(ids: OutgoingIds): Record<string, string>;
  /**
   * For providers whose subscriptions are confirmed by a visit (SNS): the URL the host must GET for a
   * verified request that asks for it, else null.
   */
  subscriptionUrl?(request: InboundRequest): string | null;
}

/**
 * Headers the mail's own fields and the host write: an adapter's outgoing header of such a name (in any
 * case) is left out of the mail, so the contract suite refuses one.
 */
export const HOST_HEADERS: readonly string[] = [
  'From',
  'Sender',
  'To',
  'Cc',
  'Bcc',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Return-Path',
  'DKIM-Signature',
  'X-Campaign-Message-Id',
  'X-Campaign-Subscriber-Id',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
];
