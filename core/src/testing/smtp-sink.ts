import { SMTPServer } from 'smtp-server';
import { simpleParser, ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';

export interface SinkMail {
  /** RCPT TO addresses. */
  to: string[];
  raw: string;
  /** The text of the sink's 250 answer to this mail. */
  answer: string;
  parse(): Promise<ParsedMail>;
}

export interface SmtpSink {
  /** `smtp://127.0.0.1:PORT` for SMTP_URL. */
  url: string;
  mails: SinkMail[];
  /** Mails whose RCPT TO held this address. */
  to(address: string): SinkMail[];
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  /** An SMTP reply code to refuse a recipient with (e.g. 550 for good, 451 for now), or null to take it. */
  refuse?(address: string): number | null;
  /** Keep no mail, only count it (benchmarks). */
  discard?: boolean;
  /** Wait this long before accepting each mail (a slow server: a send takes a while). */
  delayMs?: number;
  /** The text of the 250 answer to a mail (a relay's "Ok: queued as <id>"); default "OK: message queued". */
  answer?(raw: string): string;
  /** Default: any free port (a test that stood another server on a port gives that port). */
  port?: number;
}

/** An in-test SMTP server on loopback that takes every mail (no auth, no TLS) and keeps it. */
export async function smtpSink(
  options: SmtpSinkOptions = {},
): Promise<SmtpSink & { accepted: number; bytes: number; connections: number; peakConnections: number }> {
  const mails: SinkMail[] = [];
  const sink = {
    url: '',
    mails,
    accepted: 0,
    /** Bytes of the accepted mails' DATA (a benchmark checks two senders sent the same message). */
    bytes: 0,
    /** Connections open now, and the most open at once since `peakConnections` was last set to 0. */
    connections: 0,
    peakConnections: 0,
    to: (address: string) => mails.filter((m) => m.to.includes(address)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    size: 10 * 1024 * 1024,
    onConnect(_session, callback) {
      sink.connections++;
      sink.peakConnections = Math.max(sink.peakConnections, sink.connections);
      callback();
    },
    onClose() {
      sink.connections--;
    },
    onRcptTo(address, _session, callback) {
      const code = options.refuse?.(address.address) ?? null;
      if (code === null) return callback();
      const err = Object.assign(new Error(`${code} refused by the test sink`), { responseCode: code });
      callback(err);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      let bytes = 0;
      stream.on('data', (c: Buffer) => {
        bytes += c.length;
        if (!options.discard) chunks.push(c);
      });
      stream.on('end', async () => {
        if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
        sink.accepted++;
        sink.bytes += bytes;
        const raw = options.discard ? '' : Buffer.concat(chunks).toString('utf8');
        const answer = options.answer?.(raw) ?? 'OK: message queued';
        if (!options.discard)
          mails.push({
            to: session.envelope.rcptTo.map((r) => r.address),
            raw,
            answer,
            parse: () => simpleParser(raw),
          });
        callback(null, answer);
      });
    },
  });
  // A client that goes away mid-conversation (a killed worker) is not the sink's failure.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  sink.url = `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
  return sink;
}
