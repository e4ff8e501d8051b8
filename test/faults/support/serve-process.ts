import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '@switchboard/core/testing';
import { exitOf, freePort, runJson, startCli } from '../../src/cli';

/**
 * One `switchboard serve` process (API, queue workers, scheduler) on the given database and Redis, with
 * an organization and a token made through the CLI as an operator would. Its log is counted, not shown.
 */
export class ServeProcess {
  readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-faults-serve-'));
  private child: ReturnType<typeof startCli> | null = null;
  base = '';
  token = '';
  /** Log lines written by the process, with the time each arrived. */
  readonly logLines: Array<{ at: number; line: string }> = [];

  constructor(private readonly env: Record<string, string>) {}

  private get fullEnv(): Record<string, string> {
    return { ...this.env, DATA_DIR: this.dataDir };
  }

  async setUp(): Promise<void> {
    await runJson(['migrate'], this.fullEnv);
    const org = (await runJson(['org:create', '--name', 'Faults'], this.fullEnv)).id;
    const args = ['token:create', '--org', String(org), '--name', 'faults', '--permissions', '*'];
    this.token = (await runJson(args, this.fullEnv)).token;
  }

  /** An operator's `--json` command on this process's database, Redis and data folder. */
  cli<T = any>(args: string[]): Promise<T> {
    return runJson<T>(args, this.fullEnv);
  }

  async start(): Promise<void> {
    const port = await freePort();
    const child = startCli(['serve'], { ...this.fullEnv, PORT: String(port) });
    this.child = child;
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        for (const line of chunk.split('\n')) if (line) this.logLines.push({ at: Date.now(), line });
      });
    }
    this.base = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${this.base}/health`).catch(() => null))?.ok === true, 60_000, 100);
  }

  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  fetch(route: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.base}${route}`, {
      ...init,
      headers: { Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json', ...init.headers },
    });
  }

  async dispose(): Promise<void> {
    if (this.child) {
      this.child.kill('SIGKILL');
      await exitOf(this.child);
    }
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}
