import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';

/** A self-signed certificate for localhost valid `days` days, made with the openssl command. */
export function selfSigned(days: number): { key: string; cert: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'farm-cert-'));
  try {
    const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', String(days), '-subj', '/CN=localhost'];
    execFileSync('openssl', [...args, '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], {
      stdio: 'ignore',
    });
    return {
      key: fs.readFileSync(path.join(dir, 'key.pem'), 'utf8'),
      cert: fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface Farm {
  /** http://127.0.0.1:PORT */
  url: string;
  /** https://localhost:PORT, a self-signed certificate. */
  httpsUrl: string;
  /** What `/switch/<name>` answers from now on (default 200). */
  set(name: string, status: number): void;
  /** Requests seen per path. */
  hits: Map<string, number>;
  /** The headers of the last request per path. */
  headers: Map<string, http.IncomingHttpHeaders>;
  /** Connections accepted so far, both servers. */
  connections(): number;
  close(): Promise<void>;
}

/**
 * Servers to check, on loopback: `/status/<code>` answers that code, `/slow/<ms>` answers 200 after a
 * while, `/redirect` sends to `/status/200` (`/redirect?to=URL` to that URL), `/chain/<n>` to
 * `/chain/<n+1>` without end, `/late-redirect/<ms>` to `/status/200` after a while, `/loop/a` to `/loop/b` and back, `/choices` a 300 sending to `/status/503`,
 * `/cut` and `/stall` a body cut off or never finished, `/big-headers/<KiB>` a 200 with that much of headers,
 * `/switch/<name>` answers what the test set.
 */
export async function httpFarm(options: { certificateDays?: number } = {}): Promise<Farm> {
  const switches = new Map<string, number>();
  const hits = new Map<string, number>();
  const headers = new Map<string, http.IncomingHttpHeaders>();
  let connections = 0;
  const handler: http.RequestListener = (req, res) => {
    const url = req.url ?? '/';
    hits.set(url, (hits.get(url) ?? 0) + 1);
    headers.set(url, req.headers);
    const [, kind, arg] = url.split(/[/?]/);
    const answer = (status: number) => {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(`${status}\n`);
    };
    if (kind === 'status') return answer(Number(arg) || 200);
    if (kind === 'slow') return void setTimeout(() => answer(200), Number(arg) || 0);
    if (kind === 'redirect') {
      res.writeHead(302, { location: new URL(url, 'http://farm').searchParams.get('to') ?? '/status/200' });
      return void res.end();
    }
    if (kind === 'chain') {
      // A chain of redirects with no end: /chain/1 to /chain/2, and so on.
      res.writeHead(302, { location: `/chain/${(Number(arg) || 0) + 1}` });
      return void res.end();
    }
    if (kind === 'switch') return answer(switches.get(arg) ?? 200);
    if (kind === 'loop') {
      // /loop/a to /loop/b and back: a chain that asks a URL again.
      res.writeHead(302, { location: `/loop/${arg === 'a' ? 'b' : 'a'}` });
      return void res.end();
    }
    if (kind === 'late-redirect') {
      const to = () => {
        res.writeHead(302, { location: '/status/200' });
        res.end();
      };
      return void setTimeout(to, Number(arg) || 0);
    }
    if (kind === 'big-headers') {
      // Cookies of 4 KiB each, as many as asked for.
      const cookies = Array.from({ length: Number(arg) / 4 }, (_, i) => `c${i}=${'x'.repeat(4090)}`);
      res.writeHead(200, { 'set-cookie': cookies });
      return void res.end('ok');
    }
    if (kind === 'choices') {
      res.writeHead(300, { location: '/status/503' });
      return void res.end();
    }
    if (kind === 'cut' || kind === 'stall') {
      // 1,000 bytes promised, 3 sent: then the connection drops (cut), or nothing more comes (stall).
      res.writeHead(200, { 'content-length': '1000' });
      res.write('abc');
      if (kind === 'cut') setTimeout(() => res.socket?.destroy(), 20);
      return;
    }
    answer(404);
  };
  const plain = http.createServer(handler);
  const secure = https.createServer(selfSigned(options.certificateDays ?? 30), handler);
  for (const server of [plain, secure]) server.on('connection', () => connections++);
  const listen = (server: http.Server) =>
    new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
    );
  const [port, securePort] = [await listen(plain), await listen(secure)];
  return {
    url: `http://127.0.0.1:${port}`,
    httpsUrl: `https://localhost:${securePort}`,
    set: (name, status) => switches.set(name, status),
    hits,
    headers,
    connections: () => connections,
    async close() {
      for (const server of [plain, secure]) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}
