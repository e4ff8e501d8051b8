import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** One connection to a hanging server: what it asked for, when it came and when the client gave up. */
export interface HungRequest {
  /** The request line's path, once read. */
  path: string | null;
  /** The `webhook-id` header, when the request had one. */
  webhookId: string | null;
  openedAt: number;
  closedAt: number | null;
}

export interface HangingHttp {
  url: string;
  requests: HungRequest[];
  close(): Promise<void>;
}

/**
 * An HTTP server on loopback that accepts connections, reads the request and never answers: a receiver
 * or a monitored endpoint that hangs. Each connection is recorded until the client closes it.
 */
export async function hangingHttp(): Promise<HangingHttp> {
  const requests: HungRequest[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    const request: HungRequest = { path: null, webhookId: null, openedAt: Date.now(), closedAt: null };
    requests.push(request);
    sockets.add(socket);
    let head = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      if (request.path !== null) return;
      head += chunk;
      if (!head.includes('\r\n\r\n')) return;
      request.path = /^[A-Z]+ (\S+)/.exec(head)?.[1] ?? '';
      request.webhookId = /^webhook-id: *(\S+)/im.exec(head)?.[1] ?? null;
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      request.closedAt = Date.now();
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The most connections open at once. A client that gives up on a try and starts the next one at once is
 * seen here closing the first a moment after opening the second (both events wait for this process's
 * event loop): `closeSeenLateMs` counts a close that came that much late as if it came before.
 */
export function mostAtOnce(requests: Array<Pick<HungRequest, 'openedAt' | 'closedAt'>>, closeSeenLateMs = 0): number {
  const edges = requests.flatMap((r) => [
    { at: r.openedAt, step: 1 },
    { at: r.closedAt === null ? Infinity : r.closedAt - closeSeenLateMs, step: -1 },
  ]);
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let open = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (open += edge.step));
  return most;
}

/** How long the client held each request it gave up on, in ms. */
export const heldMs = (requests: Array<Pick<HungRequest, 'openedAt' | 'closedAt'>>) =>
  requests.filter((r) => r.closedAt !== null).map((r) => r.closedAt! - r.openedAt);
