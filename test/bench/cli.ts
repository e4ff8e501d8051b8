import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchOptions } from '@switchboard/core/testing';
import { binPath, repoRoot, runJson } from '../src/cli';

/** Wall-clock time of each command on an idle machine, in ms (issue 22). */
const TARGET_MS = { help: 300, version: 300, migrate_status: 700, token_create: 700 };

/** Milliseconds from starting `node ARGS` until it exited; a failure stops the benchmark. */
function timeNode(args: string[], env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    execFile(process.execPath, args, { cwd: repoRoot, env: { ...process.env, ...env } }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`node ${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve(performance.now() - started);
    });
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const round1 = (n: number) => Number(n.toFixed(1));

/**
 * Start-up of the `switchboard` process: `--help`, `--version` and two database commands on SQLite (the
 * repository's config, every plugin enabled), against `node -e "require('commander')"`, the least a
 * commander CLI costs.
 */
export async function cliBenchmark({ quick, log }: BenchOptions): Promise<Record<string, unknown>> {
  const rounds = quick ? 5 : 15;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-cli-bench-'));
  // Empty values count as unset: SQLite in the fresh folder, no Redis, the config file's plugins.
  const env = { DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', PLUGINS: '', APP_ENV: '', LOG_LEVEL: 'warn' };
  try {
    await runJson(['migrate'], env);
    const org = await runJson<{ id: number }>(['org:create', '--name', 'CLI bench'], env);
    const commands: Record<string, string[]> = {
      baseline_require_commander: ['-e', "require('commander')"],
      help: [binPath, '--help'],
      version: [binPath, '--version'],
      migrate_status: [binPath, 'migrate:status'],
      token_create: [binPath, 'token:create', '--org', String(org.id), '--name', 'bench'],
    };
    const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
    log('warming up: each command once');
    for (const args of Object.values(commands)) await timeNode(args, env);
    for (let round = 1; round <= rounds; round++) {
      log(`round ${round}/${rounds}: ${Object.keys(commands).join(', ')}`);
      // Alternating, reported by their median, so drift on a shared machine hits every command alike.
      for (const [name, args] of Object.entries(commands)) times[name].push(await timeNode(args, env));
    }
    const medians = Object.fromEntries(Object.entries(times).map(([name, ms]) => [name, round1(median(ms))]));
    const baseline = medians.baseline_require_commander;
    const targets = Object.entries(TARGET_MS);
    return {
      name: 'cli',
      sizes: { rounds, quick, plugins: 'config/switchboard.json', database: 'sqlite' },
      median_ms: medians,
      ratio_to_baseline: Object.fromEntries(targets.map(([name]) => [name, round1(medians[name] / baseline)])),
      targets_ms: TARGET_MS,
      met: Object.fromEntries(targets.map(([name, limit]) => [name, medians[name] <= limit])),
    };
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
