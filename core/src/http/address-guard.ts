import dns from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import type { buildConnector } from 'undici';
import { loadOnFirstUse } from '../load-on-first-use';

const undici = loadOnFirstUse(() => require('undici') as typeof import('undici'));

/**
 * Why a connection to `address` may not be made, as the error the request fails with, or null to let it
 * through. `hostname`: the name the address was resolved from (absent for an address given as such).
 */
export type AddressRefusal = (address: string, hostname?: string) => Error | null;

/**
 * A `lookup` for node:net and node:tls that resolves as usual (node:dns, looked up at each call) and
 * fails when any address found is refused: the connection is never attempted, and the address checked
 * is the one connected to, so a name whose answer changes after it was saved (DNS rebinding) gets no
 * further.
 */
export function guardedLookup(refusal: AddressRefusal): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, options, (err, found, family) => {
      if (err) return callback(err, found, family);
      const addresses = typeof found === 'string' ? [found] : found.map(({ address }) => address);
      for (const address of addresses) {
        const refused = refusal(address, hostname);
        if (refused) return callback(refused, found, family);
      }
      callback(null, found, family);
    });
  };
}

/**
 * An undici connector that checks every connection it makes: an address given as such before anything
 * (node does not call `lookup` for one), a name through `guardedLookup`.
 */
export function guardedConnector(
  refusal: AddressRefusal,
  options: buildConnector.BuildOptions = {},
): buildConnector.connector {
  const connect = undici().buildConnector({ ...options, lookup: guardedLookup(refusal) });
  return (connectOptions, callback) => {
    const refused = net.isIP(connectOptions.hostname) !== 0 ? refusal(connectOptions.hostname) : null;
    if (refused) return void callback(refused, null);
    connect(connectOptions, callback);
  };
}

/** The address of a URL host given as an IP literal (IPv6 without its brackets), or null for a name. */
export function ipLiteralOf(hostname: string): string | null {
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  return net.isIP(bare) !== 0 ? bare : null;
}
