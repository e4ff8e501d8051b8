import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Hit {
  path: string;
  at: number;
  body: string;
  webhookId: string | null;
}

export interface RecordingHttp {
  url: string;
  hits: Hit[];
  close(): Promise<void>;
}

/** A healthy HTTP server on loopback: answers every request 200 at once and records it. */
export async function recordingHttp(): Promise<RecordingHttp> {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = req.headers['webhook-id'];
      hits.push({
        path: req.url ?? '/',
        at: Date.now(),
        body: Buffer.concat(chunks).toString('utf8'),
        webhookId: typeof id === 'string' ? id : null,
      });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
