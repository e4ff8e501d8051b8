import fs from 'node:fs';
import net from 'node:net';

/** Where the kernel picks the local ports of outgoing connections (Linux; its default elsewhere). */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    return [Number(low), Number(high)];
  } catch {
    return [32768, 60999];
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A free port below the ephemeral range, for a server a test stops and starts again. In that range,
 * while the server is down its port could be taken by another process's free-port pick, or by one of
 * the engine's own reconnect attempts (a TCP connection from the port to itself), and the restart fail.
 */
export async function privatePort(): Promise<number> {
  const [low] = ephemeralRange();
  const from = Math.min(10_000, low - 1000);
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = from + Math.floor(Math.random() * (low - from));
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port between ${from} and ${low}`);
}
