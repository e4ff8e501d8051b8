import { addressAtHost } from '@switchboard/core';

/**
 * The one rule for our Message-IDs: `<ids>@<the PUBLIC_URL host>`, for a send's mail and a test mail alike, so
 * replies, bounces and providers' events name a domain that is the organization's own installation.
 */
export const mailIdDomain = (publicUrl: string): string => new URL(publicUrl).hostname;

/**
 * The Message-ID of a mail outside any send: `<kind>.<id>.<time>` (a test mail of a message, a subscriber's
 * confirmation); the event linker recognizes none of it as a send's mail.
 */
export const oneOffMailId = (publicUrl: string, kind: 'test' | 'confirm', id: number, at: Date): string =>
  `${kind}.${id}.${at.getTime()}@${mailIdDomain(publicUrl)}`;

/**
 * The sender of mail that is nobody's in particular (confirmations, changelog notices): on the same host,
 * an IP address written as an address literal (`no-reply@[192.0.2.1]`).
 */
export const noReplyAddress = (publicUrl: string): string => addressAtHost('no-reply', publicUrl);
