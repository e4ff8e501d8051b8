import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses addresses and CIDR ranges; throws with the offending entry. */
export function parseAllowlist(entries: readonly string[]): Range[] {
  return entries.map((entry) => {
    try {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry);
      const addr = ipaddr.parse(entry);
      return [addr, addr.kind() === 'ipv4' ? 32 : 128] as Range;
    } catch {
      throw new Error(`"${entry}" is not an IP address or CIDR range`);
    }
  });
}

/** An IPv4 address seen as IPv4-mapped IPv6 (::ffff:1.2.3.4) matches IPv4 ranges. */
export function addressAllowed(address: string, ranges: readonly Range[]): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  return ranges.some(([range, bits]) => parsed.kind() === range.kind() && parsed.match(range, bits));
}
