import { parseAllowlist as parseRanges } from '../auth/ip-allowlist';
import { ConfigError } from '../config/load-config';

export type Ranges = ReturnType<typeof parseRanges>;

/**
 * Private, loopback, link-local, shared, documentation, benchmark, multicast and reserved networks, and
 * the IPv6 ranges that carry an IPv4 address inside (NAT64, 6to4) with its relay anycast.
 */
export const REFUSED_RANGES = parseRanges([
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '::/128',
  '::1/128',
  'fc00::/7',
  'fe80::/10',
  'ff00::/8',
  '2001:db8::/32',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '2002::/16',
]);
// IPv4-mapped addresses (::ffff:a.b.c.d) need no range of their own: the matching sees them as the IPv4 address.

export const LOOPBACK_RANGES = parseRanges(['127.0.0.0/8', '::1']);

/** OUTBOUND_ALLOWED_RANGES: comma-separated addresses and CIDR ranges; one not understood stops start-up. */
export function allowedRangesOf(text: string | undefined): Ranges {
  if (!text) return [];
  try {
    return parseRanges(
      text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
  } catch (err) {
    throw new ConfigError(`OUTBOUND_ALLOWED_RANGES: ${(err as Error).message}`);
  }
}
