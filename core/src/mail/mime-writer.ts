import crypto from 'node:crypto';
import type { MailMessage } from './mail-message';
import { loadOnFirstUse } from '../load-on-first-use';

const mimeNode = loadOnFirstUse(() => require('nodemailer/lib/mime-node') as typeof import('nodemailer/lib/mime-node'));
const mimeFuncs = loadOnFirstUse(
  () => require('nodemailer/lib/mime-funcs') as typeof import('nodemailer/lib/mime-funcs'),
);
const qp = loadOnFirstUse(() => require('nodemailer/lib/qp') as typeof import('nodemailer/lib/qp'));

/** A mail as nodemailer sends it without composing it: the whole MIME text and its envelope. */
export interface WrittenMail {
  raw: string;
  envelope: { from: string; to: string[] };
}

/** A header value written as it is: printable ASCII on one line, well under the 998-character limit. */
const PLAIN_VALUE = /^[\x20-\x7e]{0,900}$/;
/** An address written as it is (no display name, no IDN, no quoting needed). */
const PLAIN_ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9.-]{1,190}$/;
/** Our parts' boundary: random per process, counted per mail; never in the encoded parts (checked). */
const BOUNDARY_PREFIX = `--_Sb-${crypto.randomBytes(8).toString('hex')}-`;
let boundaries = 0;

/**
 * The MIME text of a mail of text and HTML (no attachments), written here rather than by nodemailer's
 * composer, whose MIME tree, streams and encoders cost more than half of a mail's CPU in a large send
 * (docs/performance-history.md, send, 2026-11-26). The same message: the headers nodemailer writes,
 * the bodies in its encodings (7bit, else quoted-printable, base64 for mostly non-Latin text) through
 * its own encoders. null for anything beyond that (an address to encode, a header value to fold):
 * nodemailer composes those.
 */
export function writeMime(message: MailMessage, now: Date): WrittenMail | null {
  const from = typeof message.from === 'string' ? { name: '', address: message.from } : message.from;
  if (!PLAIN_ADDRESS.test(from.address) || !PLAIN_ADDRESS.test(message.to) || !message.messageId) return null;
  if (message.replyTo !== undefined && !PLAIN_ADDRESS.test(message.replyTo)) return null;
  if (!PLAIN_VALUE.test(message.messageId) || !/^[\x20-\x7e]*$/.test(from.name)) return null;
  const headers = [
    `From: ${from.name ? `${displayName(from.name)} <${from.address}>` : from.address}`,
    ...(message.replyTo ? [`Reply-To: ${message.replyTo}`] : []),
    `To: ${message.to}`,
    subjectHeader(message.subject),
    `Message-ID: ${message.messageId}`,
    `Date: ${now.toUTCString().replace(/GMT/, '+0000')}`,
    'MIME-Version: 1.0',
  ];
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (!/^[!-9;-~]+$/.test(name) || !PLAIN_VALUE.test(value)) return null;
    headers.push(`${name}: ${value}`);
  }
  const parts = [
    ...(message.text !== undefined || message.html === undefined ? [textPart('text/plain', message.text ?? '')] : []),
    ...(message.html !== undefined ? [textPart('text/html', message.html)] : []),
  ];
  let body: string;
  if (parts.length === 1) body = `${parts[0]}\r\n`;
  else {
    let boundary = `${BOUNDARY_PREFIX}${++boundaries}`;
    while (parts.some((p) => p.includes(boundary))) boundary = `${BOUNDARY_PREFIX}${++boundaries}`;
    headers.push(`Content-Type: multipart/alternative;\r\n boundary="${boundary}"`);
    body = `\r\n${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}--${boundary}--\r\n`;
  }
  return {
    raw: `${headers.join('\r\n')}\r\n${body}`,
    envelope: { from: from.address, to: [message.to] },
  };
}

/** nodemailer's rule: a name of word characters, spaces and apostrophes as it is, else quoted. */
function displayName(name: string): string {
  return /^[\w ']*$/.test(name) ? name : mimeFuncs().quoteString(name);
}

/** A run of 900 characters without a space: folding, which breaks lines at spaces, cannot shorten it. */
const UNFOLDABLE = /\S{900}/;

/** Text a mail reader would decode as an RFC 2047 encoded-word instead of showing it. */
const ENCODED_WORD = /=\?[^?\s]+\?[bq]\?[^?\s]*\?=/i;

/**
 * The subject as encoded-words (RFC 2047, which fold) when a word of it is too long for a header line of
 * 998 octets (RFC 5322 2.1.1): a merge tag's long value without a space; or when it holds text that reads
 * as an encoded-word (a subscriber's name, say), which the encoders keep as it is and readers would show
 * decoded, line breaks and all. Otherwise as it is.
 */
export function subjectAsWritten(subject: string): string {
  return UNFOLDABLE.test(subject) || ENCODED_WORD.test(subject) ? mimeFuncs().encodeWord(subject, 'Q', 52) : subject;
}

function subjectHeader(value: string): string {
  const subject = subjectAsWritten(value);
  if (PLAIN_VALUE.test(subject) && subject.length <= 76 && !subject.includes('=?')) return `Subject: ${subject}`;
  return mimeFuncs().foldLines(`Subject: ${mimeNode().default.encodeHeaderValue('Subject', subject)}`, 76);
}

/** One body part, its headers included: 7bit when it is short-lined ASCII, as nodemailer decides. */
function textPart(type: string, content: string): string {
  const text = content.replace(/\r?\n|\r/g, '\r\n');
  const funcs = mimeFuncs();
  const head = `Content-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding:`;
  if (funcs.isPlainText(text) && !funcs.hasLongerLines(text, 76)) return `${head} 7bit\r\n\r\n${text}`;
  if (mostlyLatin(text)) return `${head} quoted-printable\r\n\r\n${qp().wrap(qp().encode(text), 76)}`;
  const base64 = Buffer.from(text, 'utf8').toString('base64');
  return `${head} base64\r\n\r\n${base64.replace(/.{76}(?=.)/g, '$&\r\n')}`;
}

/** nodemailer's choice between quoted-printable and base64: fewer non-Latin characters than Latin letters. */
function mostlyLatin(text: string): boolean {
  if (mimeFuncs().isPlainText(text)) return true;
  let nonLatin = 0;
  let latin = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80 || (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d)) nonLatin++;
    else if ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a) latin++;
  }
  return nonLatin < latin;
}
