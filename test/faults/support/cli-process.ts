import type { ChildProcess } from 'node:child_process';
import { waitFor } from '@switchboard/core/testing';
import { exitOf, freePort, startCli } from '../../src/cli';

/**
 * One `switchboard ARGS` process (a worker, a scheduler, a command, or serve) that a test kills with
 * SIGKILL and starts again with the same arguments. Its log is kept, not shown.
 */
export class CliProcess {
  private child: ChildProcess | null = null;
  /** `http://127.0.0.1:PORT` of a serve process. */
  base = '';
  readonly logLines: Array<{ at: number; line: string }> = [];

  constructor(
    readonly args: string[],
    private readonly env: Record<string, string>,
  ) {}

  /** Starts it; a serve process is started once its /health answers. */
  async start(): Promise<void> {
    if (this.alive) throw new Error(`switchboard ${this.args.join(' ')} is already running`);
    const serves = this.args[0] === 'serve';
    const port = serves ? await freePort() : 0;
    const child = startCli(this.args, serves ? { ...this.env, PORT: String(port) } : this.env);
    this.child = child;
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        for (const line of chunk.split('\n')) if (line) this.logLines.push({ at: Date.now(), line });
      });
    }
    if (!serves) return;
    this.base = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => {
        if (!this.alive) throw new Error(`serve exited while starting:\n${this.logTail()}`);
        return (await fetch(`${this.base}/health`).catch(() => null))?.ok === true;
      },
      60_000,
      100,
    );
  }

  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the exit code once it ends by itself (a command). */
  exited(): Promise<number | null> {
    return this.child ? exitOf(this.child) : Promise.resolve(null);
  }

  /** A crash: SIGKILL, then waits for the process to end. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    await exitOf(child);
    this.child = null;
  }

  logTail(lines = 30): string {
    return this.logLines
      .slice(-lines)
      .map((l) => l.line)
      .join('\n');
  }
}
