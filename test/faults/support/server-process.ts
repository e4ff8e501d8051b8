import { spawn, ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { waitFor } from '@switchboard/core/testing';

/** True when something accepts a TCP connection on 127.0.0.1:port. */
export function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A server binary run by a test on its own port: started (and started again with the same arguments),
 * stopped cleanly (SIGTERM) or killed (SIGKILL). Its output goes to `logFile`, shown when it does not start.
 */
export class ServerProcess {
  private child: ChildProcess | null = null;

  constructor(
    private readonly name: string,
    private readonly command: string,
    private readonly args: string[],
    readonly port: number,
    private readonly logFile: string,
    private readonly startTimeoutMs = 60_000,
  ) {}

  get running(): boolean {
    return this.child !== null;
  }

  async start(): Promise<void> {
    if (this.child) throw new Error(`${this.name} is already running`);
    if (await portAnswers(this.port)) throw new Error(`${this.name}: port ${this.port} is taken`);
    const log = fs.openSync(this.logFile, 'a');
    const child = spawn(this.command, this.args, { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    this.child = child;
    let exited = false;
    child.once('exit', () => {
      exited = true;
      if (this.child === child) this.child = null;
    });
    try {
      await waitFor(
        async () => {
          if (exited) throw new Error(`${this.name} exited while starting:\n${this.logTail()}`);
          return this.answers();
        },
        this.startTimeoutMs,
        50,
      );
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
  }

  /** True once this server (not another one on its port) accepts connections. */
  protected answers(): Promise<boolean> {
    return portAnswers(this.port);
  }

  /** A clean shutdown: SIGTERM, then waits for the process to end. */
  stop(): Promise<void> {
    return this.signal('SIGTERM');
  }

  /** A crash: SIGKILL, then waits for the process to end. */
  kill(): Promise<void> {
    return this.signal('SIGKILL');
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child) return;
    const ended = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    child.kill(signal);
    await ended;
    this.child = null;
  }

  logTail(lines = 30): string {
    const text = fs.existsSync(this.logFile) ? fs.readFileSync(this.logFile, 'utf8') : '';
    return text.split('\n').slice(-lines).join('\n');
  }
}
