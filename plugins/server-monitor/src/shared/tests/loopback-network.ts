import dns, { type LookupAddress } from 'node:dns';
import net, { type LookupFunction } from 'node:net';
import tls from 'node:tls';

/** What a test's pretend network saw. */
export interface LoopbackNetwork {
  /** The stubbed names, each time the resolver was asked for one. */
  asked: string[];
  /** The addresses the checks' guard let through to be connected to (each then sent to 127.0.0.1). */
  connected: string[];
  restore(): void;
}

const isLoopback = (address: string) => address === '::1' || /^(::ffff:)?127\./.test(address);

/**
 * A pretend network that never leaves loopback, for tests of what checks may reach. The names given
 * resolve to the addresses given (node:dns's lookup, which the guard uses, is replaced); the addresses a
 * name resolved to that reach node:net or node:tls after the guard are recorded and connected to on
 * 127.0.0.1 instead, so a test sees what the guard let through ("a public address") while its traffic
 * stays on loopback; and an address given as such that is not loopback fails the connection at once:
 * should the guard let one through, the test fails instead of reaching it. Restore it after the test.
 */
export function loopbackNetwork(names: Record<string, string>): LoopbackNetwork {
  const seen: LoopbackNetwork = { asked: [], connected: [], restore };
  const lookup = dns.lookup;
  const netConnect = net.connect;
  const tlsConnect = tls.connect;

  type Answer = (err: null, found: string | LookupAddress[], family?: number) => void;
  dns.lookup = ((hostname: string, options: dns.LookupOptions | Answer, callback: Answer) => {
    const address = names[hostname];
    if (address === undefined || typeof options === 'function')
      return (lookup as (...args: unknown[]) => void)(hostname, options, callback);
    seen.asked.push(hostname);
    const family = net.isIP(address);
    process.nextTick(() => (options.all ? callback(null, [{ address, family }]) : callback(null, address, family)));
  }) as typeof dns.lookup;

  // What node:net is handed: an address checked as loopback, a name's lookup sent to 127.0.0.1.
  const onLoopback = (options: { host?: string; lookup?: LookupFunction }) => {
    const host = options.host ?? 'localhost';
    if (net.isIP(host) && !isLoopback(host)) throw new Error(`loopback network: a connection to ${host} was made`);
    const resolve: LookupFunction = options.lookup ?? dns.lookup;
    const lookupOnLoopback: LookupFunction = (name, lookupOptions, callback) =>
      resolve(name, lookupOptions, (err, found, family) => {
        if (err) return callback(err, found, family);
        const all: LookupAddress[] = typeof found === 'string' ? [{ address: found, family: family ?? 4 }] : found;
        seen.connected.push(...all.filter((a) => !isLoopback(a.address)).map((a) => a.address));
        if (typeof found === 'string') callback(null, '127.0.0.1', 4);
        else
          callback(
            null,
            all.map(() => ({ address: '127.0.0.1', family: 4 })),
          );
      });
    return { ...options, lookup: lookupOnLoopback };
  };
  net.connect = ((...args: unknown[]) =>
    typeof args[0] === 'object' && args[0] !== null
      ? (netConnect as (...a: unknown[]) => net.Socket)(onLoopback(args[0]), ...args.slice(1))
      : (netConnect as (...a: unknown[]) => net.Socket)(...args)) as typeof net.connect;
  tls.connect = ((...args: unknown[]) =>
    typeof args[0] === 'object' && args[0] !== null
      ? (tlsConnect as (...a: unknown[]) => tls.TLSSocket)(onLoopback(args[0]), ...args.slice(1))
      : (tlsConnect as (...a: unknown[]) => tls.TLSSocket)(...args)) as typeof tls.connect;

  function restore() {
    dns.lookup = lookup;
    net.connect = netConnect;
    tls.connect = tlsConnect;
  }
  return seen;
}
