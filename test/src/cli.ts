import { execFile, spawn, ChildProcess } from 'node:child_process';
import path from 'node:path';
import { privatePort } from './private-port';
import type { TestBackend } from '@switchboard/core/testing';

export const repoRoot = path.resolve(__dirname, '../../..');
export const binPath = path.join(repoRoot, 'bin/switchboard.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment of a CLI process on the test's backend (its database, Redis prefix and data folder). */
export function cliEnv(
  backend: TestBackend,
  plugins: string,
  more: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: backend.databaseUrl,
    REDIS_PREFIX: backend.redisPrefix,
    ...(backend.redisUrl ? { REDIS_URL: backend.redisUrl } : {}),
    PLUGINS: plugins,
    DATA_DIR: backend.dataDir,
    ...more,
  };
}

/** Runs `switchboard ARGS` as a real process, the way an operator or script would. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [binPath, ...args],
      { cwd: repoRoot, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The one JSON object a `--json` command prints. */
export async function runJson<T = any>(args: string[], env: Record<string, string>, timeoutMs?: number): Promise<T> {
  const run = await runCli([...args, '--json'], env, timeoutMs);
  if (run.code !== 0) throw new Error(`switchboard ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout.trim()) as T;
}

export function startCli(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [binPath, ...args], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
  });
}

/**
 * A port for a process a test starts: below the ephemeral range, so that no server another test file
 * opens on port 0 at the same time (mocha runs two at once) is given it before the process binds it.
 */
export const freePort = privatePort;

export function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    // Ended already: by itself (exitCode) or by a signal (signalCode, exitCode stays null).
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
  });
}
