import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '@switchboard/core';
import { repoRoot, runCli } from '../src/cli';

/** Libraries only some commands use (drivers, HTTP, mail, plugin features): listing the commands loads none. */
const LOADED_ON_FIRST_USE = [
  'knex',
  'better-sqlite3',
  'mysql2',
  'redis',
  '@redis/client',
  'bee-queue',
  'undici',
  'nodemailer',
  'koa',
  'co-body',
  'prom-client',
  'pino',
  'rate-limiter-flexible',
  'html-to-text',
  'luxon',
  'cli-progress',
];

/** The files a fresh process has loaded once it built the `switchboard` program with every plugin enabled. */
function filesLoadedByTheProgram(): Promise<string[]> {
  const script = `require('reflect-metadata');
    require('@switchboard/core').buildProgram().helpInformation();
    process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
  const env = { ...process.env, PLUGINS: '', DATABASE_URL: '', REDIS_URL: '' };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', script], { cwd: repoRoot, env }, (error, stdout, stderr) =>
      error ? reject(new Error(stderr || error.message)) : resolve(JSON.parse(stdout) as string[]),
    );
  });
}

const packageOf = (file: string) => /.*\/node_modules\/((@[^/]+\/)?[^/]+)\//.exec(file)?.[1];

describe('switchboard start-up (docs/performance-history.md, "CLI start-up")', () => {
  it('--version prints the version the API reports in meta.version', async () => {
    const run = await runCli(['--version'], {});
    expect(run.code).to.equal(0);
    expect(run.stdout).to.equal(`${loadConfig({ env: {}, file: false }).version}\n`);
  });

  it("lists every command without loading a driver, an HTTP or mail library, or the plugins' routes and jobs", async () => {
    const files = await filesLoadedByTheProgram();
    const packages = new Set(files.map(packageOf));
    expect(LOADED_ON_FIRST_USE.filter((name) => packages.has(name))).to.deep.equal([]);
    expect(files.filter((file) => file.endsWith('/dist/src/engine-parts.js'))).to.deep.equal([]);
  });

  it('tells a command run before any migration to run migrate, and a bad --to before opening anything', async function () {
    // Three node processes, one opening SQLite: ~3 s on a slow host.
    this.timeout(30_000);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-not-migrated-'));
    try {
      const file = path.join(dir, 'new.sqlite');
      const env = { DATA_DIR: dir, DATABASE_URL: `sqlite:${file}`, PLUGINS: 'users-projects' };
      for (const args of [
        ['migrate', '--to', 'abc'],
        ['migrate:rollback', '--to', '1.x'],
      ]) {
        const run = await runCli(args, env);
        expect(run.code).to.equal(1);
        expect(run.stderr).to.equal(`Error: --to must be a version such as 1.2 (or 0), got "${args[2]}"\n`);
      }
      expect(fs.existsSync(file)).to.equal(false);
      const run = await runCli(['org:create', '--name', 'Acme'], env);
      expect(run.code).to.equal(1);
      expect(run.stderr).to.equal(
        'Error: the database is not migrated to this version: run `switchboard migrate` first ' +
          '(`serve` migrates as it starts, unless --no-migrate) (no such table: organizations)\n',
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
