import { spawn, ChildProcess } from 'node:child_process';
import { waitFor } from '@switchboard/core/testing';

/** Starts a server process and waits until its health URL answers. */
export async function startServer(
  args: string[],
  env: Record<string, string>,
  healthUrl: string,
): Promise<ChildProcess> {
  // BENCH_SERVER_NODE_OPTIONS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the server under load.
  const nodeOptions = process.env.BENCH_SERVER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeOptions, ...args], {
    env: { ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The server's own output (banner, logs) goes to stderr: stdout ends with the benchmark's JSON line.
  child.stdout!.pipe(process.stderr);
  await waitFor(async () => (await fetch(healthUrl).catch(() => null))?.ok === true, 30_000);
  return child;
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
