import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook receiver on loopback that answers 204 after `delayMs` and counts the POSTs per `webhook-id`. */
export class WebhookReceiver {
  private constructor(
    /** POSTs taken per webhook-id. */
    readonly taken: Map<string, number>,
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(delayMs: number): Promise<WebhookReceiver> {
    const taken = new Map<string, number>();
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          const id = String(req.headers['webhook-id']);
          taken.set(id, (taken.get(id) ?? 0) + 1);
          res.statusCode = 204;
          res.end();
        }, delayMs),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return new WebhookReceiver(taken, server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  }

  /** Webhook-ids taken more than once. */
  get twice(): number {
    return [...this.taken.values()].filter((n) => n > 1).length;
  }

  /** POSTs taken in all. */
  count(): number {
    return [...this.taken.values()].reduce((a, b) => a + b, 0);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
