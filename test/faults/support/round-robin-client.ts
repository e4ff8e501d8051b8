export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  /** Which base (index) answered. */
  via: number;
}

/**
 * An API client with one token that sends each request to the next of several API processes in turn,
 * as a load balancer would.
 */
export class RoundRobinClient {
  private next = 0;

  constructor(
    private readonly bases: string[],
    private readonly token: string,
    private readonly prefix = '',
  ) {}

  async request(method: string, route: string, body?: unknown): Promise<Reply> {
    const via = this.next++ % this.bases.length;
    const res = await fetch(`${this.bases[via]}${this.prefix}${route}`, {
      method,
      headers: { Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the text
    }
    return { status: res.status, headers: res.headers, body: parsed, via };
  }

  /** A request that must succeed: its `data`. */
  async data<T = any>(method: string, route: string, body?: unknown): Promise<T> {
    const reply = await this.request(method, route, body);
    if (reply.status >= 300)
      throw new Error(`${method} ${route} answered ${reply.status}: ${JSON.stringify(reply.body).slice(0, 500)}`);
    return (reply.body as { data: T }).data;
  }
}
