import net from 'node:net';

/**
 * The default sender of alert mails, `monitor@<PUBLIC_URL's host>`: a host that is an IP address is written
 * as an address literal (`monitor@[192.0.2.1]`, `monitor@[IPv6:2001:db8::1]`, RFC 5321 4.1.3), as a relay
 * may refuse a bare one.
 */
export function defaultAlertSender(publicUrl: string): string {
  const host = new URL(publicUrl).hostname.replace(/^\[(.*)\]$/, '$1');
  const version = net.isIP(host);
  const domain = version === 4 ? `[${host}]` : version === 6 ? `[IPv6:${host}]` : host;
  return `monitor@${domain}`;
}
