import net from 'node:net';
import type { Agent } from 'undici';
import { LRUCache } from 'lru-cache';
import type { AppConfig } from '../config/types';
import { guardedConnector, ipLiteralOf } from './address-guard';
import {
  addressInRanges,
  allowedRangesOf,
  LOOPBACK_RANGES,
  METADATA_RANGES,
  NON_PUBLIC_RANGES,
  type Ranges,
} from './outbound-ranges';
import { loadOnFirstUse } from '../load-on-first-use';

const undici = loadOnFirstUse(() => require('undici') as typeof import('undici'));

/** Urls whose answer is kept at most (the least recently asked go first). */
const CHECKED_URLS = 1_000;

/**
 * Keeps the requests the engine makes for tenants (webhooks and the like) away from private networks.
 * `checkUrl` gives a reason to show when a URL is saved (a literal address; names are not resolved then);
 * `dispatcher` refuses the connection itself, checking the address a name resolves to at that moment.
 * OUTBOUND_ALLOWED_RANGES lists ranges allowed all the same; with APP_ENV=local loopback is allowed.
 */
export class OutboundGuard {
  private readonly allowedRanges: Ranges;
  private agent?: Agent;
  /** A url's answer never changes (names are not resolved): a receiver's is worked out once, not per try. */
  private readonly checked = new LRUCache<string, { reason: string | null }>({ max: CHECKED_URLS });

  constructor(config: Pick<AppConfig, 'appEnv' | 'env'>) {
    this.allowedRanges = [
      ...(config.appEnv === 'local' ? LOOPBACK_RANGES : []),
      ...allowedRangesOf(config.env.OUTBOUND_ALLOWED_RANGES),
    ];
  }

  /** Send every outbound request through it: undici's `request(url, { dispatcher })`. Made on first use. */
  get dispatcher(): Agent {
    this.agent ??= new (undici().Agent)({
      // As many as a webhook subscription's tries in flight (64 by default): with fewer, the tries past them
      // waited for a connection inside their 10 s, timed out at receivers that answered in time, and were
      // sent again (session 26).
      connections: 64,
      keepAliveTimeout: 10_000,
      connect: guardedConnector((address, hostname) =>
        this.isAllowedAddress(address) ? null : refusedAddressError(address, hostname),
      ),
    });
    return this.agent;
  }

  /**
   * Anything that is not a plain IPv4 or IPv6 address is refused; so are the cloud metadata services,
   * some of which sit at public addresses (Azure's WireServer, 168.63.129.16).
   */
  isAllowedAddress(ip: string): boolean {
    if (net.isIP(ip) === 0) return false;
    if (addressInRanges(ip, this.allowedRanges)) return true;
    return !addressInRanges(ip, NON_PUBLIC_RANGES) && !addressInRanges(ip, METADATA_RANGES);
  }

  /** Why the URL may not be used, or null; host names are not resolved. */
  checkUrl(url: string): string | null {
    let checked = this.checked.get(url);
    if (!checked) this.checked.set(url, (checked = { reason: this.reasonAgainst(url) }));
    return checked.reason;
  }

  private reasonAgainst(url: string): string | null {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return 'the url is not a valid url';
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'the url must use http or https';
    if (parsed.username || parsed.password) return 'the url must not contain a user name or password';
    if (!parsed.hostname) return 'the url must name a host';
    const ip = ipLiteralOf(parsed.hostname);
    if (ip && !this.isAllowedAddress(ip)) return `the url points at a private or loopback address (${ip})`;
    return null;
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }
}

/** The code of a refused connection: a caller tells it from a network failure that a retry could get past. */
export const OUTBOUND_ADDRESS_REFUSED = 'ERR_OUTBOUND_ADDRESS_REFUSED';

/**
 * An address the url gave as such is named, and refused for good. A name whose address is refused reads
 * exactly as a name that does not resolve (node's `getaddrinfo ENOTFOUND name`, code ENOTFOUND) and is
 * handled as one, tried again later: a tenant's receiver url must not become a way to tell which names
 * resolve inside the network, by the error or by how the delivery goes on.
 */
function refusedAddressError(address: string, hostname?: string): Error {
  if (hostname) {
    return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
      code: 'ENOTFOUND',
      syscall: 'getaddrinfo',
      hostname,
    });
  }
  const message = `outbound request refused: the address ${address} is private or loopback`;
  return Object.assign(new Error(message), { code: OUTBOUND_ADDRESS_REFUSED });
}
