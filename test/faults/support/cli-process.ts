import type { ChildProcess } from 'node:child_process';
import { waitFor } from '@switchboard/core/testing';
import { exitOf, freePort, startCli } from '../../src/cli';

/** A JSON log line's pino level at or above which it counts as an error (50 error, 60 fatal). */
const ERROR_LEVEL = 50;

/**
 * One `switchboard ARGS` process (serve, a worker, a scheduler, a command) started as an operator would:
 * stopped (SIGTERM), killed (SIGKILL) and started again with the same arguments. Its log lines are kept
 * with the time each arrived, not shown.
 */
export class CliProcess {
  private child: ChildProcess | null = null;
  /** `http://127.0.0.1:PORT` of a serve process. */
  base = '';
  readonly logLines: Array<{ at: number; line: string }> = [];

  constructor(
    readonly args: string[],
    private readonly env: Record<string, string>,
    readonly name = `switchboard ${args.join(' ')}`,
  ) {}

  /** Starts it; a serve process is started once its /health answers. */
  async start(): Promise<void> {
    if (this.alive) throw new Error(`${this.name} is already running`);
    const serves = this.args[0] === 'serve';
    const port = serves ? await freePort() : 0;
    const child = startCli(this.args, serves ? { ...this.env, PORT: String(port) } : this.env);
    this.child = child;
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.setEncoding('utf8');
      let partial = '';
      stream.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop()!;
        for (const line of lines) if (line) this.logLines.push({ at: Date.now(), line });
      });
    }
    if (!serves) return;
    this.base = `http://127.0.0.1:${port}`;
    await waitFor(
      async () => {
        if (!this.alive) throw new Error(`${this.name} exited while starting:\n${this.logTail()}`);
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

  /** A clean shutdown (SIGTERM, as an operator's service manager sends): the exit code. */
  async stop(): Promise<number | null> {
    if (!this.child) return null;
    const exited = exitOf(this.child);
    this.child.kill('SIGTERM');
    return exited;
  }

  /** A crash: SIGKILL, then waits for the process to end. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    await exitOf(child);
    this.child = null;
  }

  /** Lines that contain `text`, with the time each arrived. */
  linesWith(text: string): Array<{ at: number; line: string }> {
    return this.logLines.filter((l) => l.line.includes(text));
  }

  /** Lines logged at error level or above. */
  errorLines(): string[] {
    return this.logLines
      .map((l) => l.line)
      .filter((line) => {
        try {
          return Number((JSON.parse(line) as { level?: unknown }).level) >= ERROR_LEVEL;
        } catch {
          return false;
        }
      });
  }

  logTail(lines = 30): string {
    return this.logLines
      .slice(-lines)
      .map((l) => l.line)
      .join('\n');
  }

  dispose(): Promise<void> {
    return this.kill();
  }
}
