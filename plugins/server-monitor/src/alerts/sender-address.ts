import { addressAtHost } from '@switchboard/core';

/**
 * The default sender of alert mails, `monitor@<PUBLIC_URL's host>` (an IP address as an address literal,
 * `monitor@[192.0.2.1]`, `monitor@[IPv6:2001:db8::1]`).
 */
export const defaultAlertSender = (publicUrl: string): string => addressAtHost('monitor', publicUrl);
