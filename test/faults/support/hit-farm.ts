import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Monitored endpoints on loopback: `GET /s/NAME` answers 200 and records when NAME was hit, so a test
 * can count the checks each server had.
 */
export class HitFarm {
  /** The times (epoch ms) each name was hit. */
  readonly hits = new Map<string, number[]>();
  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<HitFarm> {
    const farm: HitFarm = new HitFarm(
      http.createServer((req, res) => {
        const name = /^\/s\/([^/?]+)/.exec(req.url ?? '')?.[1];
        if (name)
          farm.hits
            .set(name, farm.hits.get(name) ?? [])
            .get(name)!
            .push(Date.now());
        res.statusCode = name ? 200 : 404;
        res.end('ok');
      }),
    );
    // Many checks arrive at once: keep-alive connections, no backlog trouble.
    farm.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => farm.server.listen(0, '127.0.0.1', 1024, resolve));
    return farm;
  }

  url(name: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/s/${name}`;
  }

  /** How many times each name was hit between `from` and `to` (epoch ms), names never hit included as 0. */
  hitsBetween(names: string[], from: number, to: number): Map<string, number> {
    return new Map(names.map((n) => [n, (this.hits.get(n) ?? []).filter((t) => t >= from && t < to).length]));
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
