import net from 'node:net';
import { requiredRedisUrl } from './services';

/**
 * A TCP proxy (MariaDB, Redis) that can black-hole the connections it carries: bytes taken, nothing passed
 * on, no reset (a NAT that lost their state), while new connections still pass, or are swallowed too (a
 * server frozen).
 */
export async function blackHolingProxy(target: { host: string; port: number }) {
  const open: Array<{ client: net.Socket; upstream: net.Socket }> = [];
  const sockets = new Set<net.Socket>();
  let swallowing = false;
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    // A server frozen: the connection is taken, nothing is ever answered.
    if (swallowing) return void client.resume();
    const upstream = net.connect(target.port, target.host);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => (client.destroy(), upstream.destroy());
    client.on('error', end);
    upstream.on('error', end);
    open.push({ client, upstream });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    /** With `later`, connections made from now on are swallowed too (a server frozen, not a NAT's loss). */
    blackHole(options: { later?: boolean } = {}) {
      swallowing ||= options.later === true;
      for (const { client, upstream } of open.splice(0)) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.resume();
        upstream.resume();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The test Redis (TEST_REDIS_URL) behind such a proxy: the proxy, and the url that goes through it. */
export async function proxiedTestRedis(): Promise<{
  proxy: Awaited<ReturnType<typeof blackHolingProxy>>;
  url: string;
}> {
  const url = new URL((await requiredRedisUrl())!);
  const proxy = await blackHolingProxy({ host: url.hostname, port: Number(url.port || 6379) });
  url.host = `127.0.0.1:${proxy.port}`;
  return { proxy, url: url.toString() };
}
