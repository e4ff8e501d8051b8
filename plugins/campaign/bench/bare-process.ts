import { spawn } from 'node:child_process';
import { waitFor } from '@switchboard/core/testing';

/**
 * A benchmark's baseline server (a bare Koa script of this folder) as its own process on a free port, up once
 * its `/` answers. The server's node options (BENCH_SERVER_NODE_OPTIONS, a profiler say) apply to it too.
 */
export async function startBareProcess(script: string, env: Record<string, string>) {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const nodeOptions = process.env.BENCH_SERVER_NODE_OPTIONS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeOptions, script], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = () => child.kill('SIGTERM');
  await waitFor(async () => (await fetch(`${url}/`).catch(() => null))?.ok === true, 120_000).catch((err) => {
    stop();
    throw err;
  });
  return { url, pid: child.pid!, stop };
}
