import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * How a stalling server treats a connection: `no-greeting` accepts it and says nothing; `silent` greets,
 * then never answers; `trickle` greets, then answers EHLO one byte at a time and never ends the line.
 */
export type StallKind = 'no-greeting' | 'silent' | 'trickle';

export interface StalledConnection {
  kind: StallKind;
  openedAt: number;
  /** When the client gave up and closed it (null while it is open). */
  closedAt: number | null;
}

export interface StallingSmtp {
  port: number;
  /** `smtp://127.0.0.1:PORT` for SMTP_URL. */
  url: string;
  connections: StalledConnection[];
  /** Ends every connection and stops listening (the port is free again). */
  close(): Promise<void>;
}

export interface StallingSmtpOptions {
  /** The kinds given to connections in turn (default: all three). */
  kinds?: StallKind[];
  /** A trickling answer's pace (default one byte a second). */
  trickleEveryMs?: number;
  /** Default: any free port. */
  port?: number;
}

/** An in-test SMTP server on loopback that takes connections and never gets a mail through (a hung relay). */
export async function stallingSmtp(options: StallingSmtpOptions = {}): Promise<StallingSmtp> {
  const kinds = options.kinds ?? ['no-greeting', 'silent', 'trickle'];
  const connections: StalledConnection[] = [];
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = net.createServer((socket) => {
    const connection: StalledConnection = {
      kind: kinds[connections.length % kinds.length],
      openedAt: Date.now(),
      closedAt: null,
    };
    connections.push(connection);
    sockets.add(socket);
    socket.on('error', () => undefined);
    // Read what the client says (and its end): a paused socket would never see the client close it.
    socket.resume();
    socket.on('close', () => {
      connection.closedAt = Date.now();
      sockets.delete(socket);
    });
    if (connection.kind === 'no-greeting') return;
    socket.write('220 stalling.test ESMTP\r\n');
    if (connection.kind === 'silent') return;
    socket.once('data', () => {
      const timer = setInterval(() => socket.writable && socket.write('2'), options.trickleEveryMs ?? 1000);
      timers.add(timer);
      socket.on('close', () => {
        clearInterval(timer);
        timers.delete(timer);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearInterval(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
