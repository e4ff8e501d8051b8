import { binPath, freePort } from '../src/cli';
import { startServer, stop } from './processes';

/** `switchboard serve` (API only) as its own process on a free port. */
export async function serveSwitchboard(env: Record<string, string>): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = await startServer(
    [binPath, 'serve', '--no-worker', '--no-scheduler', '--no-migrate'],
    { ...env, PORT: String(port) },
    `${url}/health`,
  );
  return { url, stop: () => stop(child) };
}
