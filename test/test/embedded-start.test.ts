import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { waitFor } from '@switchboard/core/testing';
import { exitOf, freePort, startCli } from '../src/cli';

describe('npm start on a fresh machine (embedded default)', () => {
  it('creates and migrates the SQLite file, serves every enabled plugin, prints how to get a token, stops on SIGTERM', async () => {
    const machine = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-start-'));
    // Not there yet: serve makes it.
    const dataDir = path.join(machine, 'data');
    const port = await freePort();
    const env: Record<string, string> = { DATA_DIR: dataDir, PORT: String(port) };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'PLUGINS', 'APP_ENV']) env[name] = '';
    const child = startCli(['serve'], env);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    try {
      await waitFor(() => output.includes('Switchboard is serving'), 30_000);
      expect(output).to.contain('token:create');
      expect(output).to.contain(`Metrics:      http://127.0.0.1:${port}/metrics`);
      expect(fs.existsSync(path.join(dataDir, 'switchboard.sqlite'))).to.equal(true);
      // What it made is its user's alone: the folder, the database (-wal and -shm while it runs), the keys.
      const modeOf = (name: string) => (fs.statSync(path.join(dataDir, name)).mode & 0o777).toString(8);
      expect(modeOf('.')).to.equal('700');
      const files = [
        'switchboard.sqlite',
        'switchboard.sqlite-wal',
        'switchboard.sqlite-shm',
        'app.key',
        'server-monitor.key',
      ];
      expect(Object.fromEntries(files.map((f) => [f, modeOf(f)]))).to.deep.equal(
        Object.fromEntries(files.map((f) => [f, '600'])),
      );
      const base = `http://127.0.0.1:${port}`;
      const ready = await request(base).get('/ready').expect(200);
      expect(ready.body.checks).to.deep.equal({ database: 'ok' });
      const doc = await request(base).get('/api/openapi.json').expect(200);
      expect(doc.body.paths).to.include.keys(
        '/api/v1/users',
        '/api/campaign/subscribers',
        '/api/campaign/lists/{id}/subscribers',
      );
      await request(base).get('/api/v1/users').expect(401);
      await request(base).get('/api/campaign/subscribers').expect(401);
      const docs = await request(base).get('/api/docs').expect(200);
      expect(docs.text).to.contain('swagger-ui-bundle.js');
      await request(base)
        .get('/api/docs/swagger-ui-bundle.js')
        .expect(200)
        .expect('Content-Type', /javascript/);
    } finally {
      child.kill('SIGTERM');
      expect(await exitOf(child)).to.equal(0);
      fs.rmSync(machine, { recursive: true, force: true });
    }
  });

  it('serve --no-migrate on a database not migrated yet: requests answer 503 saying to run migrate, never 500', async () => {
    const machine = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-unmigrated-'));
    const port = await freePort();
    const env: Record<string, string> = { DATA_DIR: path.join(machine, 'data'), PORT: String(port) };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'PLUGINS', 'APP_ENV']) env[name] = '';
    const child = startCli(['serve', '--no-migrate'], env);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    try {
      await waitFor(() => output.includes('Switchboard is serving'), 30_000);
      const base = `http://127.0.0.1:${port}`;
      const token = `Bearer sb_${'a'.repeat(40)}`;
      for (const url of ['/api/v1/users', '/api/campaign/subscribers', '/api/servermonitor/servers']) {
        const res = await request(base).get(url).set('Authorization', token);
        expect([url, res.status, res.body.error?.code]).to.deep.equal([url, 503, 'SERVICE_UNAVAILABLE']);
        expect(res.body.error.message).to.contain('run migrate');
      }
      // The server monitor's key routes too (their own 500 wrapped everything, SQL text included).
      const key = fs.readFileSync(path.join(machine, 'data', 'server-monitor.key'), 'utf8').trim();
      const status = await request(base).get(`/api/servermonitor/worker-status/${key}`);
      expect([status.status, JSON.stringify(status.body)]).to.deep.equal([503, JSON.stringify(status.body)]);
      expect(JSON.stringify(status.body)).to.contain('run migrate').and.not.contain('select');
      await waitFor(() => output.includes('database not migrated to this version (run migrate)'), 10_000);
    } finally {
      child.kill('SIGTERM');
      expect(await exitOf(child)).to.equal(0);
      fs.rmSync(machine, { recursive: true, force: true });
    }
  });

  it('in production, says at start-up that /metrics is not served until METRICS_TOKEN or METRICS_ALLOW is set, and refuses it', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-start-'));
    const port = await freePort();
    const env: Record<string, string> = {
      DATA_DIR: dataDir,
      PORT: String(port),
      APP_ENV: 'production',
      APP_KEY: crypto.randomBytes(32).toString('base64'),
      SERVER_MONITOR_API_KEY: crypto.randomBytes(24).toString('hex'),
      PUBLIC_URL: 'https://mail.acme.example',
      LOG_LEVEL: 'warn',
    };
    for (const name of ['DATABASE_URL', 'REDIS_URL', 'PLUGINS', 'METRICS_TOKEN', 'METRICS_ALLOW']) env[name] = '';
    const child = startCli(['serve'], env);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    try {
      await waitFor(() => output.includes('Switchboard is serving'), 30_000);
      // Behind a balancer each API process says where it listens itself, then the URL the world uses.
      expect(output).to.match(
        new RegExp(
          `Switchboard is serving [a-z, -]+ on http://127\\.0\\.0\\.1:${port} \\(public URL https://mail\\.acme\\.example\\)\\n`,
        ),
      );
      const reason = 'Metrics are not served with APP_ENV=production until METRICS_TOKEN or METRICS_ALLOW is set';
      expect(output).to.contain(`Metrics:      not served (${reason})`);
      // The log line and the banner go to stdout by different writers: the log's may come second.
      await waitFor(() => output.includes(`"msg":"${reason}: /metrics answers 403"`), 10_000);
      const refused = await request(`http://127.0.0.1:${port}`).get('/metrics').expect(403);
      expect(refused.body.error).to.include({ code: 'AUTH_INSUFFICIENT_PERMISSIONS', message: reason });
    } finally {
      child.kill('SIGTERM');
      expect(await exitOf(child)).to.equal(0);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }).timeout(60_000);

  it('two serves on one SQLite file run one scheduler between them; the other takes over at once when it is killed', async function () {
    this.timeout(90_000);
    const machine = fs.mkdtempSync(path.join(os.tmpdir(), 'switchboard-two-serves-'));
    const serve = async () => {
      const env: Record<string, string> = {
        DATA_DIR: path.join(machine, 'data'),
        PORT: String(await freePort()),
        LOG_LEVEL: 'info',
      };
      for (const name of ['DATABASE_URL', 'REDIS_URL', 'PLUGINS', 'APP_ENV']) env[name] = '';
      const child = startCli(['serve'], env);
      const process = { child, output: '' };
      child.stdout!.on('data', (chunk) => (process.output += chunk));
      child.stderr!.on('data', (chunk) => (process.output += chunk));
      return process;
    };
    const ACTIVE = 'scheduler is now the active one';
    const first = await serve();
    let second: Awaited<ReturnType<typeof serve>> | undefined;
    try {
      await waitFor(() => first.output.includes(ACTIVE), 30_000);
      second = await serve();
      await waitFor(() => second!.output.includes('scheduler waits: another process is the active one'), 30_000);
      expect(second.output).not.to.contain(ACTIVE);
      // Killed, it hands nothing over: the other sees its holder no longer runs and takes over on its next
      // tick (a second), long before the lock's 30 s lapse.
      first.child.kill('SIGKILL');
      await exitOf(first.child);
      await waitFor(() => second!.output.includes(ACTIVE), 10_000);
    } finally {
      for (const { child } of [first, ...(second ? [second] : [])]) if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.all([first, ...(second ? [second] : [])].map(({ child }) => exitOf(child)));
      fs.rmSync(machine, { recursive: true, force: true });
    }
  });
});
