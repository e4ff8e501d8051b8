import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** An outbound-webhook receiver on loopback: answers 204 and counts each `webhook-id` it took. */
export class WebhookReceiver {
  /** Tries taken, by webhook-id. */
  readonly taken = new Map<string, number>();
  /** Events taken, by the body's `event`. */
  readonly events = new Map<string, number>();
  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<WebhookReceiver> {
    const receiver: WebhookReceiver = new WebhookReceiver(
      http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const id = String(req.headers['webhook-id']);
          const count = (receiver.taken.get(id) ?? 0) + 1;
          receiver.taken.set(id, count);
          if (count === 1) {
            let event = '?';
            try {
              event = String((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event?: unknown }).event);
            } catch {
              // not JSON: counted as '?'
            }
            receiver.events.set(event, (receiver.events.get(event) ?? 0) + 1);
          }
          res.statusCode = 204;
          res.end();
        });
      }),
    );
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', 1024, resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  /** Webhook-ids taken more than once. */
  duplicated(): string[] {
    return [...this.taken].filter(([, n]) => n > 1).map(([id]) => id);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
