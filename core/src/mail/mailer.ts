import type { SendMailOptions, Transporter } from 'nodemailer';
import type { DkimKey } from '../config/types';
import { loadOnFirstUse } from '../load-on-first-use';
import type { MailMessage } from './mail-message';
import { subjectAsWritten, writeMime } from './mime-writer';
import { DEFAULT_OUTBOX_KEEP, outbox } from './outbox';

const nodemailerModule = loadOnFirstUse(() => require('nodemailer') as typeof import('nodemailer'));

export type { MailMessage } from './mail-message';

export interface SentMail {
  messageId: string;
  /** The id the SMTP relay gave the mail in its answer ("250 Ok: queued as …"), when it named one. */
  relayId?: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<SentMail>;
  close(): void;
}

export interface MailerOptions {
  smtpUrl?: string;
  outboxDir: string;
  /** Mails the outbox keeps, the newest (0: all; default DEFAULT_OUTBOX_KEEP). */
  outboxKeep?: number;
  /** SMTP connections kept open and used at once (default 5). */
  maxConnections?: number;
  /** At most this many mails handed to SMTP per second (default: no limit). */
  messagesPerSecond?: number;
  /** Keys that sign the mail of their From domain (DKIM). */
  dkim?: DkimKey[];
  /** One mail's whole hand-over to SMTP, its wait for a pool connection included (default 60 s). */
  sendTimeoutMs?: number;
}

/**
 * SMTP time limits, below nodemailer's own (2 minutes to connect, 10 minutes of silence): a relay that
 * accepts the connection and then says nothing would hold a send's claim and the mail jobs that long.
 * Options on SMTP_URL's query still win (`?socketTimeout=120000`).
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };
export const DEFAULT_SEND_TIMEOUT_MS = 60_000;

const PRINTABLE_LINE = /^[\x20-\x7e]{0,900}$/;

/**
 * Headers as written: nodemailer would MIME-encode a value with quotes or braces (a provider's JSON
 * header such as X-SMTPAPI), which the provider then cannot read. Printable ASCII of one line goes as
 * it is; anything else is left to nodemailer's encoding.
 */
function preparedHeaders(headers: Record<string, string> | undefined) {
  if (!headers) return undefined;
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      PRINTABLE_LINE.test(value) ? { prepared: true, value } : value,
    ]),
  );
}

/**
 * The headers a DKIM signature covers: nodemailer's own list, plus List-Unsubscribe-Post, which RFC 8058
 * (section 4) requires signed with List-Unsubscribe for mailbox providers to offer one-click unsubscribe.
 */
const DKIM_SIGNED_HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:' +
  'Content-ID:Content-Description:Resent-Date:Resent-From:Resent-Sender:Resent-To:Resent-Cc:Resent-Message-ID:' +
  'In-Reply-To:References:List-Id:List-Help:List-Unsubscribe:List-Unsubscribe-Post:List-Subscribe:List-Post:' +
  'List-Owner:List-Archive:Feedback-ID:OTP-Token';

/**
 * What core hands nodemailer for a message: its headers as written, and the DKIM signature of a mail
 * from a domain that has a key (nodemailer signs it). The send benchmark's baseline sends the same.
 */
export function nodemailerMail(original: MailMessage, keys: DkimKey[]): SendMailOptions {
  return {
    ...original,
    subject: subjectAsWritten(original.subject),
    headers: preparedHeaders(original.headers) as never,
    ...dkimOf(original.from, keys),
  };
}

/** nodemailer's `dkim` option for a mail from a domain that has a key. */
function dkimOf(from: MailMessage['from'], keys: DkimKey[]): Pick<SendMailOptions, 'dkim'> {
  if (!keys.length) return {};
  const address = typeof from === 'string' ? from : from.address;
  const domain = address
    .slice(address.lastIndexOf('@') + 1)
    .replace(/>.*$/, '')
    .toLowerCase();
  const key = keys.find((k) => k.domain === domain);
  return key
    ? {
        dkim: {
          domainName: key.domain,
          keySelector: key.selector,
          privateKey: key.privateKey,
          headerFieldNames: DKIM_SIGNED_HEADERS,
        },
      }
    : {};
}

/** The mail as written here when it can be (writeMime), else as nodemailer composes it. */
function smtpMail(message: MailMessage, keys: DkimKey[]): SendMailOptions {
  const written = writeMime(message, new Date());
  return written ? { ...written, ...dkimOf(message.from, keys) } : nodemailerMail(message, keys);
}

/**
 * SMTP when SMTP_URL is set (a pool of connections, optionally throttled); otherwise each mail becomes an
 * .eml file in the outbox folder, which keeps the newest OUTBOX_KEEP.
 */
export function createMailer(options: MailerOptions): Mailer {
  // Made for the first mail: a process that sends none does not load nodemailer.
  let made: Transporter | undefined;
  const transport = () => (made ??= createTransport(options));
  const close = () => made?.close();
  if (options.smtpUrl) {
    const sendTimeoutMs = options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS;
    return {
      async send(message) {
        // The time limits above end a silent server; this ends one that answers a byte at a time.
        const info = await handOver(transport(), smtpMail(message, options.dkim ?? []), sendTimeoutMs);
        const messageId = message.messageId ?? info.messageId;
        const relayId = relayIdOf(String(info.response ?? ''));
        return relayId ? { messageId, relayId } : { messageId };
      },
      close,
    };
  }
  const write = outbox(options.outboxDir, options.outboxKeep ?? DEFAULT_OUTBOX_KEEP);
  return {
    async send(message) {
      const info = await transport().sendMail(nodemailerMail(message, options.dkim ?? []));
      await write(info.messageId, info.message as Buffer);
      return { messageId: info.messageId };
    },
    close,
  };
}

/**
 * sendMail, aborted past `ms`. A timer cleared once the mail is handed over: AbortSignal.timeout's timer
 * lives its whole time and is tracked for the garbage collector, a cost on every mail of a large send.
 */
async function handOver(transport: Transporter, mail: SendMailOptions, ms: number) {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no hand-over within ${ms} ms`, 'TimeoutError')),
    ms,
  );
  try {
    return await transport.sendMail({ ...mail, signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

function createTransport(options: MailerOptions): Transporter {
  const nodemailer = nodemailerModule();
  if (!options.smtpUrl) return nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return nodemailer.createTransport({
    ...SMTP_TIMEOUTS,
    url: options.smtpUrl,
    pool: true,
    maxConnections: options.maxConnections ?? 5,
    maxMessages: Infinity,
    ...(options.messagesPerSecond ? { rateDelta: 1000, rateLimit: options.messagesPerSecond } : {}),
  });
}

/**
 * The id in a relay's 250 answer: the word after "queued as" (Postfix, SendGrid, Postmark), else a last
 * word that looks like an id, with a digit and 8 or more characters (SES: "250 Ok 0100018b…"). An
 * answer such as "250 OK: message queued" names none.
 */
export function relayIdOf(response: string): string | undefined {
  const queued = /queued as\s+<?([^\s<>]+)>?/i.exec(response);
  if (queued) return queued[1].slice(0, 191);
  const last = response.trim().split(/\s+/).pop() ?? '';
  const word = last.replace(/^<|>$/g, '');
  return /^250\b/.test(response) && word.length >= 8 && /\d/.test(word) && /^[\w.@=+-]+$/.test(word)
    ? word.slice(0, 191)
    : undefined;
}

/**
 * An SMTP failure that will not pass on a retry: the server answered 5xx (unknown mailbox, refused).
 * Connection drops, timeouts and 4xx answers are transient.
 */
export function isPermanentMailError(err: unknown): boolean {
  const code = (err as { responseCode?: number }).responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
}

/**
 * The relay refused this mail's recipient for good (a 5xx to RCPT TO: an unknown mailbox), not everything
 * (a refused login, a sender or quota refused at MAIL FROM, a relay out of reach): sending it to that
 * address again will not help.
 */
export function isRecipientRefused(err: unknown): boolean {
  return isPermanentMailError(err) && (err as { command?: unknown }).command === 'RCPT TO';
}

/** A file system that cannot take the outbox's mail now: full, read-only, not ours, failing. */
const OUTBOX_UNWRITABLE = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM', 'EIO']);

/**
 * The mail was not handed over at all, through nobody's fault of the recipient: the relay could not be
 * reached (its address not found, the connection refused or not made) or refused our login, or the
 * outbox folder cannot be written (a full disk). Nothing was sent, so a retry cannot send twice.
 */
export function isHandoverUnavailable(err: unknown): boolean {
  const e = err as { code?: unknown; syscall?: unknown; timeoutType?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  // Refused, unreachable, or no answer to the connection itself (nodemailer's connect timeout).
  if (e.syscall === 'connect' || e.syscall === 'getaddrinfo' || e.timeoutType === 'CONNECT_TIMEOUT') return true;
  if (e.code === 'EDNS' || isRelayLoginRefused(err)) return true;
  return typeof e.syscall === 'string' && typeof e.code === 'string' && OUTBOX_UNWRITABLE.has(e.code);
}

/** The relay refused our login (or wants one we did not give): nothing passes until an operator fixes it. */
export function isRelayLoginRefused(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'EAUTH' || code === 'ENOAUTH';
}
