import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An outbound-webhook receiver on loopback: answers 204 after `delayMs`, counts the tries it took per
 * `webhook-id` and the events per the body's `event`.
 */
export class WebhookReceiver {
  /** Tries taken, by webhook-id. */
  readonly taken = new Map<string, number>();
  /** Events taken (first tries), by the body's `event`. */
  readonly events = new Map<string, number>();
  private constructor(private readonly server: http.Server) {}

  static async start(delayMs = 0): Promise<WebhookReceiver> {
    const receiver: WebhookReceiver = new WebhookReceiver(
      http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () =>
          setTimeout(() => {
            receiver.take(String(req.headers['webhook-id']), Buffer.concat(chunks));
            res.statusCode = 204;
            res.end();
          }, delayMs),
        );
      }),
    );
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', 1024, resolve));
    return receiver;
  }

  private take(id: string, body: Buffer): void {
    const count = (this.taken.get(id) ?? 0) + 1;
    this.taken.set(id, count);
    if (count > 1) return;
    let event = '?';
    try {
      event = String((JSON.parse(body.toString('utf8')) as { event?: unknown }).event);
    } catch {
      // not JSON: counted as '?'
    }
    this.events.set(event, (this.events.get(event) ?? 0) + 1);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/`;
  }

  /** Tries taken in all. */
  count(): number {
    return [...this.taken.values()].reduce((a, b) => a + b, 0);
  }

  /** Webhook-ids taken more than once. */
  duplicated(): string[] {
    return [...this.taken].filter(([, n]) => n > 1).map(([id]) => id);
  }

  /** How many webhook-ids were taken more than once. */
  get twice(): number {
    return this.duplicated().length;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
