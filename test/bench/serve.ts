import { binPath, freePort } from '../src/cli';
import { spawn } from 'node:child_process';
import { startServer, stop } from './processes';

/** `switchboard serve` as its own process on a free port: API only, or everything (workers, scheduler). */
export async function serveSwitchboard(
  env: Record<string, string>,
  options: { everything?: boolean } = {},
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = await startServer(
    [binPath, 'serve', ...(options.everything ? [] : ['--no-worker', '--no-scheduler']), '--no-migrate'],
    { ...env, PORT: String(port) },
    `${url}/health`,
  );
  return { url, pid: child.pid!, stop: () => stop(child) };
}

/** `switchboard worker` as its own process: its output goes to stderr with the benchmark's progress. */
export async function workerSwitchboard(env: Record<string, string>): Promise<{ pid: number; stop(): Promise<void> }> {
  const nodeOptions = process.env.BENCH_WORKER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeOptions, binPath, 'worker'], {
    env: { ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout!.pipe(process.stderr);
  return { pid: child.pid!, stop: () => stop(child) };
}
