import { runJson } from '../../src/cli';
import { CliProcess } from './cli-process';

export interface ScaleOutShape {
  apis: number;
  workers: number;
  schedulers: number;
}

/**
 * The scale-out topology on one machine (operator-contract.md): `serve --no-worker --no-scheduler` API
 * processes, `worker` processes and `scheduler` processes, all on one database and one Redis with one
 * environment (the same APP_KEY, DATA_DIR and config file), as an operator would run them.
 */
export class ScaleOut {
  readonly apis: CliProcess[];
  readonly workers: CliProcess[];
  readonly schedulers: CliProcess[];

  /** `workerEnv(i)`: what worker i's environment has of its own (its SMTP server, say). */
  constructor(
    readonly env: Record<string, string>,
    shape: ScaleOutShape,
    workerEnv: (i: number) => Record<string, string> = () => ({}),
  ) {
    const many = (n: number, name: string, args: string[], more: (i: number) => Record<string, string>) =>
      Array.from({ length: n }, (_, i) => new CliProcess(args, { ...env, ...more(i) }, `${name}-${i + 1}`));
    this.apis = many(shape.apis, 'api', ['serve', '--no-worker', '--no-scheduler', '--no-migrate'], () => ({}));
    this.workers = many(shape.workers, 'worker', ['worker'], workerEnv);
    // At info level: a scheduler says when it becomes the active one.
    this.schedulers = many(shape.schedulers, 'scheduler', ['scheduler'], () => ({ LOG_LEVEL: 'info' }));
  }

  get processes(): CliProcess[] {
    return [...this.apis, ...this.workers, ...this.schedulers];
  }

  /** An operator command with `--json` (migrate, org:create, token:create, ...): its JSON output. */
  operator<T = any>(args: string[]): Promise<T> {
    return runJson<T>(args, this.env, 120_000);
  }

  async start(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.start()));
  }

  async dispose(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.dispose()));
  }
}
