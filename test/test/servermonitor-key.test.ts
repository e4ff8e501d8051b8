import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { waitFor } from '@switchboard/core/testing';
import { exitOf, freePort, runCli, runJson, startCli } from '../src/cli';

/** issue 25: the server-monitor key on a fresh machine, and the key a deployment must set. */
describe('server-monitor key from the first start', () => {
  let dataDir: string;
  beforeEach(() => (dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-key-cli-'))));
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const keyFile = () => path.join(dataDir, 'server-monitor.key');

  /** The embedded default, APP_ENV=local, no key set. */
  const local = (more: Record<string, string> = {}) => ({
    DATA_DIR: dataDir,
    PLUGINS: 'users-projects,server-monitor',
    LOG_LEVEL: 'info',
    ...Object.fromEntries(
      ['DATABASE_URL', 'REDIS_URL', 'APP_ENV', 'PUBLIC_URL', 'SERVER_MONITOR_API_KEY'].map((n) => [n, '']),
    ),
    ...more,
  });

  /**
   * `serve` until its banner and its log line naming the key's file (the logger writes asynchronously: the
   * line may follow the banner); each JSON log line printed up to then, read.
   */
  async function serving(port: number, body: (logs: Array<Record<string, any>>) => Promise<void>): Promise<void> {
    const child = startCli(['serve'], local({ PORT: String(port) }));
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    const logs = () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, any>);
    try {
      await waitFor(
        () => output.includes('Switchboard is serving') && logs().some((l) => l.file === keyFile()),
        60_000,
      );
      await body(logs());
    } finally {
      child.kill('SIGTERM');
      expect(await exitOf(child)).to.equal(0);
    }
  }

  it('serve (APP_ENV=local, no SERVER_MONITOR_API_KEY) generates DATA_DIR/server-monitor.key, names it at start-up and takes it; the next start and the CLI see the same key', async function () {
    this.timeout(180_000);
    const file = keyFile();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    let key = '';
    await serving(port, async (logs) => {
      key = fs.readFileSync(file, 'utf8');
      expect(key).to.match(/^[0-9a-f]{48}$/);
      const said = logs.filter((l) => l.file === file);
      expect(said).to.have.length(1);
      expect(said[0].msg).to.contain(`generated into ${file}`).and.contain(`cat ${file}`).and.not.contain(key);
      const status = await request(base).get(`/api/servermonitor/worker-status/${key}`).expect(200);
      expect(status.body.dashboard_url).to.equal(`${base}/api/servermonitor/dashboard/${key}`);
      await request(base)
        .get(`/api/servermonitor/worker-status/${'0'.repeat(48)}`)
        .expect(403);
    });
    await serving(port, async (logs) => {
      expect(logs.filter((l) => l.file === file).map((l) => l.msg)[0]).to.contain(`kept in ${file}`);
      await request(base).get(`/api/servermonitor/check/heartbeats/${key}`).expect(200);
    });
    expect(fs.readFileSync(file, 'utf8')).to.equal(key);

    expect((await runCli(['servermonitor:key'], local())).stdout).to.equal(`${key}\n`);
    expect(await runJson(['servermonitor:key'], local())).to.deep.equal({ key, source: 'file', file });
    const given = crypto.randomBytes(24).toString('hex');
    expect(await runJson(['servermonitor:key'], local({ SERVER_MONITOR_API_KEY: given }))).to.deep.equal({
      key: given,
      source: 'env',
    });
  });

  it('staging refuses to start with a key under 24 characters, saying why and how to make one; production without one has no key to print', async function () {
    this.timeout(120_000);
    const deployed = (env: Record<string, string>) =>
      local({ APP_ENV: 'staging', APP_KEY: crypto.randomBytes(32).toString('base64'), LOG_LEVEL: 'warn', ...env });
    const refused = await runCli(['serve'], deployed({ SERVER_MONITOR_API_KEY: 'smkey123' }));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.equal(
      'Error: SERVER_MONITOR_API_KEY is 8 characters long; APP_ENV=staging needs at least 24, as anyone who reaches /api/servermonitor/ may try keys: make one with `openssl rand -hex 24` (48 characters)\n',
    );
    expect(refused.stdout).to.not.contain('Switchboard is serving');

    const unset = await runCli(['servermonitor:key'], deployed({ APP_ENV: 'production' }));
    expect(unset.code).to.equal(1);
    expect(unset.stderr).to.contain('SERVER_MONITOR_API_KEY is unset: every server-monitor route answers 403');
    expect(fs.readdirSync(dataDir)).to.not.include('server-monitor.key');
  });
});
