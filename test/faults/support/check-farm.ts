import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Monitored servers on loopback: `/server/<id>` answers 200 after `delayMs`, and every request is
 * counted per server with the time it arrived (a check that reached its server).
 */
export class CheckFarm {
  private constructor(
    /** Arrival times of the requests, per server id. */
    readonly hits: Map<number, number[]>,
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(delayMs: number): Promise<CheckFarm> {
    const hits = new Map<number, number[]>();
    const server = http.createServer((req, res) => {
      const id = Number(/^\/server\/(\d+)/.exec(req.url ?? '')?.[1]);
      if (id) hits.set(id, [...(hits.get(id) ?? []), Date.now()]);
      setTimeout(() => {
        res.writeHead(id ? 200 : 404, { 'content-type': 'text/plain' });
        res.end('ok\n');
      }, delayMs);
    });
    // Many checks at once: keep every connection.
    server.maxConnections = 10_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return new CheckFarm(hits, server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }

  endpoint(id: number): string {
    return `${this.url}/server/${id}`;
  }

  /** Requests of every server, or of those that arrived between `from` and `to` (epoch ms). */
  count(from = 0, to = Infinity): number {
    let n = 0;
    for (const times of this.hits.values()) n += times.filter((t) => t >= from && t < to).length;
    return n;
  }

  /** The time of the last request, 0 before any. */
  lastHit(): number {
    let last = 0;
    for (const times of this.hits.values()) last = Math.max(last, ...times);
    return last;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
