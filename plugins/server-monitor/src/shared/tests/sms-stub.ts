import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SmsRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  /** The form fields posted (To, From, Body). */
  form: Record<string, string>;
  /** The status it was answered with. */
  status: number;
}

export interface SmsStub {
  /** http://127.0.0.1:PORT */
  url: string;
  requests: SmsRequest[];
  /** Requests whose To was this number. */
  to(number: string): SmsRequest[];
  /** The next `count` requests are answered with `status` instead of 201. */
  failNext(count: number, status?: number): void;
  close(): Promise<void>;
}

/** A Twilio-compatible SMS API on loopback: keeps every form post, answers 201 unless told to fail. */
export async function smsStub(): Promise<SmsStub> {
  const requests: SmsRequest[] = [];
  const failures: number[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = failures.shift() ?? 201;
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '',
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        form: Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))),
        status,
      });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(status < 300 ? { sid: `SM${requests.length}` } : { message: 'stub failure' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    to: (number) => requests.filter((r) => r.form.To === number),
    failNext(count, status = 500) {
      failures.push(...Array.from({ length: count }, () => status));
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
