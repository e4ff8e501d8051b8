import net from 'node:net';

/**
 * `local@<URL's host>`, the sender of mail the engine writes for itself (alerts, confirmations): a host that
 * is an IP address is written as an address literal (`no-reply@[192.0.2.1]`, `monitor@[IPv6:2001:db8::1]`,
 * RFC 5321 4.1.3), as relays refuse a bare one (`no-reply@[::1]` was answered `501 Bad sender address`).
 */
export function addressAtHost(local: string, url: string): string {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  const version = net.isIP(host);
  const domain = version === 4 ? `[${host}]` : version === 6 ? `[IPv6:${host}]` : host;
  return `${local}@${domain}`;
}
