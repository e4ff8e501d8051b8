import { addressAllowed, parseAllowlist as parseRanges } from '../auth/ip-allowlist';
import { ConfigError } from '../config/load-config';

export type Ranges = ReturnType<typeof parseRanges>;

/** Whether an address is in one of the ranges; an IPv4-mapped IPv6 address (::ffff:a.b.c.d) counts as its IPv4. */
export const addressInRanges: (address: string, ranges: Ranges) => boolean = addressAllowed;

/**
 * Private, loopback, link-local, shared, documentation, benchmark, multicast and reserved networks, and
 * the IPv6 ranges that carry an IPv4 address inside (NAT64, 6to4 with its relay anycast, IPv4-compatible
 * `::a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`, Teredo), since a host may route them to the IPv4
 * address they hold.
 */
export const NON_PUBLIC_RANGES = parseRanges([
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
  '::/96',
  '::ffff:0:0:0/96',
  '2001::/32',
  '100::/64',
]);
// IPv4-mapped addresses (::ffff:a.b.c.d) need no range of their own: the matching sees them as the IPv4 address.

export const LOOPBACK_RANGES = parseRanges(['127.0.0.0/8', '::1']);

const METADATA_IPV4 = [
  '169.254.0.0/16', // link-local: the metadata service of AWS, GCP, Azure, Oracle, DigitalOcean, OpenStack...
  '100.100.100.200/32', // Alibaba Cloud's metadata service
  '168.63.129.16/32', // Azure's host endpoint (WireServer)
  '192.0.0.192/32', // Oracle Cloud's older metadata service
];

/** The IPv6 forms that carry an IPv4 address in their last 32 bits: NAT64, IPv4-compatible, IPv4-translated. */
const IPV4_CARRIERS = ['64:ff9b::', '::', '::ffff:0:'];

/** `cidr` (IPv4) written after `carrier` in hexadecimal (ipaddr.js reads `::a.b.c.d` as IPv4-mapped). */
function carried(carrier: string, cidr: string): string {
  const [address, bits] = cidr.split('/');
  const [a, b, c, d] = address.split('.').map(Number);
  const hex = (high: number, low: number) => ((high << 8) | low).toString(16);
  return `${carrier}${hex(a, b)}:${hex(c, d)}/${96 + Number(bits)}`;
}

/**
 * Link-local addresses and the cloud metadata services that hand out an instance's credentials: what no
 * request made for a tenant may reach, private networks allowed or not. The IPv4 ones count in each
 * IPv6 form that carries them too; IPv4-mapped addresses (::ffff:a.b.c.d) are matched as their IPv4 anyway.
 */
export const METADATA_RANGES = parseRanges([
  ...METADATA_IPV4,
  ...IPV4_CARRIERS.flatMap((carrier) => METADATA_IPV4.map((cidr) => carried(carrier, cidr))),
  'fe80::/10', // IPv6 link-local
  'fd00:ec2::254/128', // AWS's metadata service over IPv6
  // Forms that carry an IPv4 address elsewhere than in their last 32 bits (6to4 in bits 16-47, Teredo
  // inverted, local-use NAT64 split around bits 64-71): refused whole rather than decoded (session 27:
  // 2002:a9fe:a9fe:: reached the monitor's checks). Nothing a tenant monitors needs them.
  '2002::/16',
  '2001::/32',
  '64:ff9b:1::/48',
]);

/**
 * An environment variable of comma-separated addresses and CIDR ranges (OUTBOUND_ALLOWED_RANGES and the
 * like); one not understood stops start-up, the message naming the variable.
 */
export function allowedRangesOf(text: string | undefined, variable = 'OUTBOUND_ALLOWED_RANGES'): Ranges {
  if (!text) return [];
  try {
    return parseRanges(
      text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
  } catch (err) {
    throw new ConfigError(`${variable}: ${(err as Error).message}`);
  }
}
