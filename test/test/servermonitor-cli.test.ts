import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend, waitFor } from '@switchboard/core/testing';
import { Farm, httpFarm } from '@switchboard/plugin-server-monitor/dist/test/farm';
import { exitOf, freePort, runCli, runJson, startCli } from '../src/cli';

const KEY = 'cli-monitor-key-0123456789';

describeEachBackend('server-monitor from the command line', (backend) => {
  let farm: Farm;
  let dir: string;
  before(async () => {
    farm = await httpFarm();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-cli-'));
  });
  after(async () => {
    await farm?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const env = () => ({
    DATABASE_URL: backend().databaseUrl,
    REDIS_PREFIX: backend().redisPrefix,
    ...(backend().redisUrl ? { REDIS_URL: backend().redisUrl! } : {}),
    PLUGINS: 'users-projects,server-monitor',
    DATA_DIR: backend().dataDir,
    SERVER_MONITOR_API_KEY: KEY,
  });
  const csv = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };

  it('migrates to 1.2, imports a CSV, checks, pings heartbeats, purges, measures capacity and sends test alerts', async () => {
    await runJson(['migrate'], env());
    const status = await runJson(['migrate:status'], env());
    expect(status.status.find((s: { plugin: string }) => s.plugin === 'server-monitor')).to.include({ current: '1.2' });

    const file = csv(
      'servers.csv',
      [
        'title,endpoint,organization_name,status,notes',
        `Web,${farm.url}/status/200,Acme,200,main site`,
        `API,${farm.url}/status/503,Acme,,`,
        `Secure,${farm.httpsUrl}/status/200,Globex,200,`,
        ',https://no-title.test/,Acme,,',
        'Bad,not a url,Acme,,',
        `Web again,${farm.url}/status/200,Acme,,`,
        'Short,https://short.test/',
      ].join('\n'),
    );
    const dry = await runJson(['servermonitor:import', file, '--dry-run'], env());
    expect(dry).to.include({ imported: 3, organizations_created: 2, errors: 4, dry_run: true });
    const imported = await runJson(['servermonitor:import', file], env());
    expect(imported).to.include({ imported: 3, organizations_created: 2, errors: 4, dry_run: false });
    expect(imported.error_rows).to.deep.equal([
      { line: 5, message: 'title: missing' },
      { line: 6, message: 'endpoint: not a valid URL' },
      { line: 7, message: `duplicate: ${farm.url}/status/200 is already a server of this organization` },
      { line: 8, message: 'organization_name: missing' },
    ]);
    const human = await runCli(['servermonitor:import', file], env());
    expect(human.code).to.equal(0);
    expect(human.stdout).to.contain('Imported 0 servers, 0 organizations created, 7 errors');
    const unknown = await runJson(['servermonitor:import', file, '--organization=999999'], env());
    expect(unknown).to.include({ imported: 0, errors: 7 });
    expect(unknown.error_rows[0].message).to.equal('organization 999999 (--organization) not found');
    const headerless = await runCli(['servermonitor:import', csv('bad.csv', 'name,url\nx,y\n')], env());
    expect(headerless.code).to.equal(1);
    expect(headerless.stderr).to.contain('lacks the column(s) title, endpoint, organization_name');

    const premium = await runCli(['servermonitor:checkserverstatus', '--premium'], env());
    expect(premium.code).to.equal(1);
    expect(premium.stderr).to.contain('No active subscriptions found');

    const port = await freePort();
    const serve = startCli(['serve', '--no-scheduler'], { ...env(), PORT: String(port) });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${base}/health`).catch(() => null))?.ok === true, 20_000);
      const checked = await runJson(['servermonitor:checkserverstatus', '--free'], env());
      expect(checked.output).to.contain('Dispatched 3 server checks (3 new servers)');
      // Without Redis the command ran its checks itself; with Redis the serve process's worker did.
      await waitFor(async () => {
        const s = (await request(base).get(`/api/servermonitor/worker-status/${KEY}`)).body;
        return s.sla_compliance?.free.checked === 3;
      }, 20_000);

      const beat = await runJson(['servermonitor:heartbeat:create', '--server', '1', '--interval', '60'], env());
      expect(beat.ping_url).to.match(/\/api\/servermonitor\/ping\/[A-Za-z0-9_-]{32}$/);
      await request(base).get(new URL(beat.ping_url).pathname).expect(200);
      const beats = (await request(base).get(`/api/servermonitor/check/heartbeats/${KEY}`).expect(200)).body;
      expect(beats).to.include({ missing: 0, healthy: 1 });
      const noServer = await runCli(
        ['servermonitor:heartbeat:create', '--server', '999999', '--interval', '60'],
        env(),
      );
      expect(noServer.code).to.equal(1);
      expect(noServer.stderr).to.contain('Server with ID 999999 not found');
    } finally {
      serve.kill('SIGTERM');
      await exitOf(serve);
    }

    const ssl = await runJson(['servermonitor:checksslcertificates'], env());
    expect(ssl).to.include({ checked: 1, expiring_soon: 0, expired: 0 });
    const heartbeats = await runJson(['servermonitor:checkheartbeats'], env());
    expect(heartbeats).to.include({ missing: 0, healthy: 1 });
    const purge = await runJson(['servermonitor:purge-logs', '--organization=1'], env());
    expect(purge.output).to.match(/^Deleted 0 log entries and 0 check results of 1 organizations/);
    const capacity = await runJson(['servermonitor:check-capacity'], env());
    expect(capacity.servers).to.deep.equal({ premium: 0, free: 3 });
    expect(capacity.required_checks_per_second).to.equal(0.01);
    expect(capacity.measured_checks_per_second).to.be.above(0);
    expect(capacity.workers_needed).to.equal(1);
    expect(capacity.meets_sla).to.equal(true);

    // An administrator of Acme (created through the users API) gets the test alert, in the outbox.
    const token = await runJson(['token:create', '--org', '1', '--name', 'ops', '--permissions', '*'], env());
    const api = startCli(['serve', '--no-scheduler', '--no-worker'], { ...env(), PORT: String(port) });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${base}/health`).catch(() => null))?.ok === true, 20_000);
      await request(base)
        .post('/api/v1/users')
        .set('Authorization', `Bearer ${token.token}`)
        .send({ name: 'Ops', email: 'ops@acme.test', role: 'admin' })
        .expect(201);
    } finally {
      api.kill('SIGTERM');
      await exitOf(api);
    }
    const alerts = await runJson(['servermonitor:testalerts'], env());
    expect(alerts).to.include({ success: true, sent: 1, failed: 0 });
    const outbox = path.join(backend().dataDir, 'outbox');
    const mails = fs.readdirSync(outbox).map((f) => fs.readFileSync(path.join(outbox, f), 'utf8'));
    expect(mails.some((m) => m.includes('To: ops@acme.test') && m.includes('Test alert'))).to.equal(true);
  });
});
