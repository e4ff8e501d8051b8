import { decodeHTMLAttribute } from 'entities';
import { TRACKED_LINK, type MailTracking } from './tracking-links';
import { loadOnFirstUse, type MailMessage } from '@switchboard/core';
import { HOST_HEADERS } from '@switchboard/provider-kit';
import { compileTemplate, MergeValues, placesTag, Template, verbatim, withTagsKept } from './merge-tags';
import { escapeHtml } from '../shared/html';

// Loaded where first used: the CLI lists its commands without it.
const htmlToText = loadOnFirstUse(() => require('html-to-text') as typeof import('html-to-text'));

export interface SenderIdentity {
  fromName: string | null;
  fromEmail: string;
  replyTo: string | null;
}

export interface MessageContent {
  id: number;
  subject: string;
  preheader: string | null;
  content_html: string | null;
  content_text: string | null;
}

export interface Recipient {
  id: number;
  email: string;
  first_name: string | null;
  last_name: string | null;
  company_name: string | null;
  phone: string | null;
  job_title: string | null;
  meta: Record<string, unknown>;
}

/** The preheader: the first text a mail client shows after the subject, hidden in the body itself. */
const preheaderHtml = (text: string) =>
  `<div style="display:none;max-height:0;overflow:hidden;mso-hide:all">${text}</div>`;

/**
 * A message compiled once for a send: each recipient's mail is its templates filled with that
 * recipient's values (HTML-escaped in the HTML part), the sender, and the headers every mail carries.
 */
export class Composer {
  private readonly subject: Template;
  private readonly preheader: Template | null;
  private readonly html: Template | null;
  private readonly text: Template;
  /** Whether each part places its own unsubscribe link; a part that does not gets a footer with one. */
  private readonly htmlFooter: boolean;
  private readonly textFooter: boolean;

  constructor(
    private readonly message: MessageContent,
    private readonly sender: SenderIdentity,
    private readonly options: {
      subjectPrefix?: string;
      /** The enabled provider adapters' headers that bring our ids back with the provider's events. */
      providerHeaders?: (ids: { messageId: number; subscriberId: number }) => Record<string, string>;
    } = {},
  ) {
    this.subject = compileTemplate(message.subject);
    this.preheader = message.preheader ? compileTemplate(message.preheader) : null;
    this.html = message.content_html ? compileTemplate(message.content_html) : null;
    // No text part of its own: the HTML's text, converted once with its tags kept for each recipient.
    const text =
      message.content_text ??
      (message.content_html
        ? withTagsKept(message.content_html, (html) =>
            htmlToText().convert(html, { wordwrap: 78, selectors: textSelectors }),
          )
        : '');
    this.text = compileTemplate(text);
    this.htmlFooter = !placesTag(message.content_html ?? '', 'unsubscribe_url');
    this.textFooter = !placesTag(text, 'unsubscribe_url');
  }

  /** `mailId` becomes the Message-ID (without its angle brackets). */
  compose(recipient: Recipient, links: { unsubscribe: string; tracking?: MailTracking }, mailId: string): MailMessage {
    const values: MergeValues = {
      subscriber: { ...recipient, meta: recipient.meta },
      links: { unsubscribe_url: links.unsubscribe },
    };
    const subject = (this.options.subjectPrefix ?? '') + this.subject(values, verbatim);
    const preheader = this.preheader?.(values, escapeHtml);
    const body = this.html?.(values, escapeHtml);
    const html =
      body !== undefined
        ? tracked(
            afterBodyStart(
              beforeBodyEnd(
                body,
                this.htmlFooter
                  ? `<p style="font-size:12px"><a href="${escapeHtml(links.unsubscribe)}">Unsubscribe</a></p>`
                  : '',
              ),
              preheader ? preheaderHtml(preheader) : '',
            ),
            links,
          )
        : undefined;
    const text = this.text(values, verbatim) + (this.textFooter ? `\n\n--\nUnsubscribe: ${links.unsubscribe}\n` : '');
    return {
      from: this.sender.fromName
        ? { name: this.sender.fromName, address: this.sender.fromEmail }
        : this.sender.fromEmail,
      to: recipient.email,
      replyTo: this.sender.replyTo ?? undefined,
      subject,
      html,
      text,
      messageId: `<${mailId}>`,
      headers: {
        ...adaptersOwn(this.options.providerHeaders?.({ messageId: this.message.id, subscriberId: recipient.id })),
        'X-Campaign-Message-Id': String(this.message.id),
        'X-Campaign-Subscriber-Id': String(recipient.id),
        'List-Unsubscribe': `<${links.unsubscribe}>`,
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
      },
    };
  }
}

/** An adapter's header named as one the host writes (HOST_HEADERS), in any case, is left out. */
const NOT_ADAPTERS = new Set(HOST_HEADERS.map((name) => name.toLowerCase()));

function adaptersOwn(headers: Record<string, string> | undefined): Record<string, string> {
  if (!headers) return {};
  const names = Object.keys(headers);
  if (!names.some((name) => NOT_ADAPTERS.has(name.toLowerCase()))) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !NOT_ADAPTERS.has(name.toLowerCase())));
}

// `\s` before href: `\b` matched inside `data-href`, which was tracked in place of the link itself.
const LINK = /(<a\b[^>]*?\shref\s*=\s*)(["'])(https?:\/\/[^"']+)\2/gi;

/**
 * The HTML with its tracking: every http(s) link but the unsubscribe link through the click redirect,
 * and the open pixel at the end of the body.
 */
function tracked(html: string, links: { unsubscribe: string; tracking?: MailTracking }): string {
  const { click, open } = links.tracking ?? {};
  const out = click
    ? html.replace(LINK, (whole, start: string, quote: string, href: string) => {
        // As a browser reads an attribute: `&region=` is not `®ion=` (a legacy entity without its `;`).
        const url = decodeHTMLAttribute(href);
        return url === links.unsubscribe || url.length > TRACKED_LINK.maxLength
          ? whole
          : `${start}${quote}${escapeHtml(click(url))}${quote}`;
      })
    : html;
  return open
    ? beforeBodyEnd(out, `<img src="${escapeHtml(open)}" width="1" height="1" alt="" style="display:none">`)
    : out;
}

/**
 * `html` with `extra` at the start of its body: after `<body>`, else after `</head>`, `<html>` or the doctype,
 * else at the very start (an HTML fragment): never before a doctype.
 */
function afterBodyStart(html: string, extra: string): string {
  if (!extra) return html;
  const start =
    /<body\b[^>]*>/i.exec(html) ??
    /<\/head\s*>/i.exec(html) ??
    /<html\b[^>]*>/i.exec(html) ??
    /<!doctype\b[^>]*>/i.exec(html);
  return start
    ? html.slice(0, start.index + start[0].length) + extra + html.slice(start.index + start[0].length)
    : extra + html;
}

/** `html` with `extra` at the end of its body (or at its end when it has no body tag). */
function beforeBodyEnd(html: string, extra: string): string {
  if (!extra) return html;
  const end = html.search(/<\/body>/i);
  return end < 0 ? html + extra : html.slice(0, end) + extra + html.slice(end);
}

/** Merge tags inside links survive the conversion: hrefs are written as they are. */
const textSelectors = [{ selector: 'a', options: { hideLinkHrefIfSameAsText: true, noAnchorUrl: true } }];
