import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchBackend, BenchOptions } from '@switchboard/core/testing';
import usersProjects from '@switchboard/plugin-users-projects';
import monitor from '../src';

const ROWS = 100_000;
const ORGANIZATIONS = 500;
const TARGET_SECONDS = 10;
/** The importer's own sizes: 500 rows a statement, 2,000 a transaction. */
const STATEMENT = 500;
const TRANSACTION = 2_000;

const row = (i: number) => ({
  title: `Server ${i}`,
  endpoint: `https://server-${i}.example.test/health`,
  organization_name: `Organization ${i % ORGANIZATIONS}`,
});

/** A fresh SQLite database migrated for the plugin, its environment, and the knex to it. */
async function freshSqlite() {
  return benchBackend([usersProjects, monitor], { embedded: true });
}

/** `servermonitor:import FILE` as its own process on a fresh database: wall seconds, process start included. */
async function importSeconds(file: string, rows: number, command: BenchOptions['command']): Promise<number> {
  const { backend, engine, env } = await freshSqlite();
  try {
    await engine.close();
    const started = performance.now();
    const result = await command(['servermonitor:import', file], env);
    const seconds = (performance.now() - started) / 1000;
    if (result.imported !== rows || result.errors !== 0)
      throw new Error(`the import answered ${JSON.stringify({ ...result, error_rows: undefined })}`);
    return seconds;
  } finally {
    await backend.dispose();
  }
}

/**
 * The baseline: the same organizations and server rows written straight into monitor_servers of another
 * fresh database with knex, in the importer's statement and transaction sizes, in this process: no CSV,
 * no validation, no duplicate or organization lookups, no process start.
 */
async function baselineSeconds(): Promise<number> {
  const { backend, engine } = await freshSqlite();
  const knex = engine.knex;
  try {
    const now = new Date();
    const started = performance.now();
    const orgIds: number[] = [];
    for (let i = 0; i < ORGANIZATIONS; i++) {
      const [id] = await knex('organizations').insert({ name: `Organization ${i}`, created_at: now, updated_at: now });
      orgIds.push(Number(id));
    }
    for (let from = 0; from < ROWS; from += TRANSACTION)
      await knex.transaction(async (trx) => {
        for (let at = from; at < Math.min(ROWS, from + TRANSACTION); at += STATEMENT)
          await trx('monitor_servers').insert(
            Array.from({ length: Math.min(STATEMENT, ROWS - at) }, (_, k) => {
              const { title, endpoint } = row(at + k);
              const organization_id = orgIds[(at + k) % ORGANIZATIONS];
              return { organization_id, title, endpoint, created_at: now, updated_at: now };
            }),
          );
      });
    return (performance.now() - started) / 1000;
  } finally {
    await engine.close();
    await backend.dispose();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * `npm run bench -- monitor-import`: `servermonitor:import` of 100,000 rows (title, endpoint,
 * organization_name; 500 organizations, all new) on a fresh SQLite database, through the CLI, against
 * the same rows written with plain knex, and the command on a header-only file (its start). Three
 * alternating rounds (one with --quick), medians.
 */
export async function monitorImportBenchmark({ quick, log, command }: BenchOptions): Promise<Record<string, unknown>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-import-'));
  try {
    const file = path.join(dir, 'servers.csv');
    const lines = ['title,endpoint,organization_name'];
    for (let i = 0; i < ROWS; i++) {
      const r = row(i);
      lines.push(`${r.title},${r.endpoint},${r.organization_name}`);
    }
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    // The same command on a header-only file: what starting the process and the engine costs.
    const empty = path.join(dir, 'empty.csv');
    fs.writeFileSync(empty, `${lines[0]}\n`);
    const imports: number[] = [];
    const starts: number[] = [];
    const baselines: number[] = [];
    for (let round = 0; round < (quick ? 1 : 3); round++) {
      log(
        `round ${round + 1}: importing ${ROWS} rows through the CLI, a header-only file, then the plain knex baseline`,
      );
      imports.push(await importSeconds(file, ROWS, command));
      starts.push(await importSeconds(empty, 0, command));
      baselines.push(await baselineSeconds());
      log(
        `  import ${imports[round].toFixed(2)} s (empty file ${starts[round].toFixed(2)} s), baseline ${baselines[round].toFixed(2)} s`,
      );
    }
    const seconds = median(imports);
    const baseline = median(baselines);
    return {
      name: 'monitor-import',
      database: 'sqlite',
      quick,
      rows: ROWS,
      organizations: ORGANIZATIONS,
      file_mb: Number((fs.statSync(file).size / 1e6).toFixed(1)),
      rounds: imports.length,
      seconds: Number(seconds.toFixed(2)),
      rows_per_second: Math.round(ROWS / seconds),
      all_seconds: imports.map((s) => Number(s.toFixed(2))),
      empty_file_seconds: Number(median(starts).toFixed(2)),
      baseline: {
        what: 'plain knex insert of the same rows into monitor_servers, in process',
        seconds: Number(baseline.toFixed(2)),
        rows_per_second: Math.round(ROWS / baseline),
      },
      ratio_to_baseline: Number((baseline / seconds).toFixed(2)),
      targets: { seconds: TARGET_SECONDS },
      met: { seconds: seconds < TARGET_SECONDS },
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
