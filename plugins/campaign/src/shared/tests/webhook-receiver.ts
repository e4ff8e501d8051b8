import { Webhook } from 'standardwebhooks';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** An in-test receiver on loopback: `answer` gives each request's status by path and the path's request count. */
export async function receiver(answer: (path: string, n: number) => number = () => 204) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ path: req.url!, headers: req.headers, body });
      res.statusCode = answer(req.url!, received.filter((r) => r.path === req.url).length);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path: string, host = '127.0.0.1') => `http://${host}:${port}${path}`,
    received,
    at: (path: string) => received.filter((r) => r.path === path),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A receiver's check of a Standard Webhooks signature: the standard's own library (dev dependency
 * standardwebhooks), a secret other than `whsec_...` given as its UTF-8 bytes, as docs/operations.md says.
 */
export function verified(secret: string, r: Received): boolean {
  try {
    const webhook = secret.startsWith('whsec_')
      ? new Webhook(secret)
      : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
    webhook.verify(r.body, r.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}
