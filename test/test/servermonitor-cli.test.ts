import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Knex } from 'knex';
import request from 'supertest';
import { createKnex, hashToken } from '@switchboard/core';
import { describeEachBackend, waitFor } from '@switchboard/core/testing';
import { Farm, httpFarm } from '@switchboard/plugin-server-monitor/dist/src/shared/tests/farm';
import { smsStub, SmsStub } from '@switchboard/plugin-server-monitor/dist/src/shared/tests/sms-stub';
import { cliEnv, exitOf, freePort, runCli, runJson, startCli } from '../src/cli';

const KEY = 'cli-monitor-key-0123456789';

describeEachBackend('server-monitor from the command line', (backend) => {
  let farm: Farm;
  let sms: SmsStub;
  let dir: string;
  /** The CLI's database, for what only SQL sets (a premium organization, a notification setting). */
  let knex: Knex;
  before(async () => {
    farm = await httpFarm();
    sms = await smsStub();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-cli-'));
    knex = createKnex(backend().databaseUrl);
  });
  after(async () => {
    await knex?.destroy();
    await Promise.all([farm?.close(), sms?.close()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const env = () => cliEnv(backend(), 'users-projects,server-monitor', { SERVER_MONITOR_API_KEY: KEY });
  const csv = (name: string, text: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, text);
    return file;
  };

  it('migrates to 1.2, imports a CSV, checks, pings heartbeats, purges, measures capacity, sends test alerts and rolls back to 1.1', async () => {
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

    const now = new Date();
    const [initech] = await knex('organizations').insert({
      name: 'Initech',
      selected_plan: 'pro',
      subscription_status: 'active',
      created_at: now,
      updated_at: now,
    });
    const intranet = csv(
      'intranet.csv',
      `title,endpoint,organization_name\nIntranet,${farm.url}/status/200,Nobody Inc\n`,
    );
    const into = await runJson(['servermonitor:import', intranet, `--organization=${initech}`], env());
    expect(into).to.include({ imported: 1, organizations_created: 0, errors: 0 });
    expect(await knex('monitor_servers').where({ title: 'Intranet' }).pluck('organization_id')).to.deep.equal([
      Number(initech),
    ]);
    expect(await knex('organizations').where({ name: 'Nobody Inc' }).first()).to.equal(undefined);

    const port = await freePort();
    const serve = startCli(['serve', '--no-scheduler'], { ...env(), PORT: String(port) });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${base}/health`).catch(() => null))?.ok === true, 20_000);
      const checked = await runJson(['servermonitor:checkserverstatus'], env());
      expect(checked).to.deep.equal({
        success: true,
        message: 'Server checks queued for all servers',
        output: 'Dispatched 4 server checks (4 new servers)',
      });
      // Without Redis the command ran its checks itself; with Redis the serve process's worker did.
      await waitFor(async () => {
        const s = (await request(base).get(`/api/servermonitor/worker-status/${KEY}`)).body;
        return s.sla_compliance?.free.checked === 3 && s.sla_compliance?.premium.checked === 1;
      }, 20_000);
      const free = await runJson(['servermonitor:checkserverstatus', '--free'], env());
      expect(free.output).to.equal(
        'Dispatched 0 server checks (0 new servers); free servers were dispatched less than half a cadence ago',
      );

      const beat = await runJson(
        ['servermonitor:heartbeat:create', '--server', '1', '--interval', '60', '--grace', '30'],
        env(),
      );
      expect(beat).to.include({ server_id: 1, interval_seconds: 60, grace_seconds: 30 });
      expect(beat.ping_url).to.match(/\/api\/servermonitor\/ping\/[A-Za-z0-9_-]{32}$/);
      await request(base).get(new URL(beat.ping_url).pathname).expect(200);
      const plain = await runCli(
        ['servermonitor:heartbeat:create', '--server', '4', '--interval', '300', '--grace', '45'],
        env(),
      );
      expect(plain.code).to.equal(0);
      expect(plain.stdout).to.match(/^http:\/\/\S+\/api\/servermonitor\/ping\/[A-Za-z0-9_-]{32}\n$/);
      const pingUrl = new URL(plain.stdout.trim());
      expect(
        await knex('monitor_heartbeats')
          .where({ token: hashToken(pingUrl.pathname.split('/').pop()!) })
          .first(),
      ).to.include({
        server_id: 4,
        interval_seconds: 300,
        grace_seconds: 45,
      });
      await request(base).head(pingUrl.pathname).expect(200);
      const beats = (await request(base).get(`/api/servermonitor/check/heartbeats/${KEY}`).expect(200)).body;
      expect(beats).to.include({ missing: 0, healthy: 2 });
      const noServer = await runCli(
        ['servermonitor:heartbeat:create', '--server', '999999', '--interval', '60'],
        env(),
      );
      expect(noServer.code).to.equal(1);
      expect(noServer.stderr).to.contain('Server with ID 999999 not found');
      const noGrace = await runCli(
        ['servermonitor:heartbeat:create', '--server', '1', '--interval', '60', '--grace', '0'],
        env(),
      );
      expect(noGrace.code).to.equal(1);
      expect(noGrace.stderr).to.equal(
        'Error: --grace must be a whole number of seconds from 1 to 31536000 (a year), got "0"\n',
      );
    } finally {
      serve.kill('SIGTERM');
      await exitOf(serve);
    }

    const ssl = await runJson(['servermonitor:checksslcertificates'], env());
    expect(ssl).to.include({ checked: 1, expiring_soon: 0, expired: 0 });
    const heartbeats = await runJson(['servermonitor:checkheartbeats'], env());
    expect(heartbeats).to.include({ missing: 0, healthy: 2 });
    // A log entry of Globex's server past the free plan's 7 days: only the purge of everyone takes it.
    await knex('monitor_logs').insert({
      server_id: 3,
      original_status: '200',
      updated_status: '503',
      note: 'last month',
      created_at: new Date(Date.now() - 30 * 86_400_000),
    });
    const purge = await runJson(['servermonitor:purge-logs', '--organization=1'], env());
    expect(purge.output).to.match(/^Deleted 0 log entries and 0 check results of 1 organizations/);
    const purgeAll = await runJson(['servermonitor:purge-logs'], env());
    expect(purgeAll.output).to.match(/^Deleted 1 log entries and 0 check results of 3 organizations/);
    expect(await knex('monitor_logs').where({ note: 'last month' }).first()).to.equal(undefined);
    const capacity = await runJson(['servermonitor:check-capacity'], env());
    expect(capacity.servers).to.deep.equal({ premium: 1, free: 3 });
    expect(capacity.required_checks_per_second).to.equal(0.03);
    expect(capacity.measured_checks_per_second).to.be.above(0);
    expect(capacity.workers_needed).to.equal(1);
    expect(capacity.meets_sla).to.equal(true);

    // An administrator of Acme (created through the users API) gets the test alert by e-mail, in the
    // outbox, and by SMS, as the notification setting (only SQL sets it) says.
    const token = await runJson(['token:create', '--org', '1', '--name', 'ops', '--permissions', '*'], env());
    const api = startCli(['serve', '--no-scheduler', '--no-worker'], { ...env(), PORT: String(port) });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${base}/health`).catch(() => null))?.ok === true, 20_000);
      const ops = await request(base)
        .post('/api/v1/users')
        .set('Authorization', `Bearer ${token.token}`)
        .send({ name: 'Ops', email: 'ops@acme.test', role: 'admin', phone: '+15550100' })
        .expect(201);
      await knex('monitor_notification_settings').insert({
        organization_id: 1,
        administrators: JSON.stringify([{ user_id: ops.body.data.id, email_enabled: true, sms_enabled: true }]),
        created_at: now,
        updated_at: now,
      });
    } finally {
      api.kill('SIGTERM');
      await exitOf(api);
    }
    const smsEnv = {
      SMS_DRIVER: 'http',
      SMS_URL: `${sms.url}/sms`,
      SMS_FROM: '+15550000',
      SMS_USER: 'u',
      SMS_PASSWORD: 'p',
    };
    const alerts = await runJson(['servermonitor:testalerts'], { ...env(), ...smsEnv });
    expect(alerts).to.deep.equal({ success: true, organizations: 3, sent: 2, failed: 0 });
    const outbox = path.join(backend().dataDir, 'outbox');
    const mails = fs
      .readdirSync(outbox)
      .filter((f) => f.endsWith('.eml'))
      .map((f) => fs.readFileSync(path.join(outbox, f), 'utf8'));
    expect(mails.some((m) => m.includes('To: ops@acme.test') && m.includes('Test alert'))).to.equal(true);
    expect(sms.requests).to.have.length(1);
    expect(sms.requests[0].form).to.include({ To: '+15550100', From: '+15550000' });
    expect(sms.requests[0].form.Body).to.match(/^Test alert from Switchboard server monitor\n/);
    expect(sms.requests[0].authorization).to.equal(`Basic ${Buffer.from('u:p').toString('base64')}`);
    // An alert not delivered fails the command, as its result says (it exited 0).
    const failing = await runCli(['servermonitor:testalerts', '--json'], {
      ...env(),
      ...smsEnv,
      SMS_URL: 'http://127.0.0.1:9/sms',
    });
    expect(failing.code).to.equal(1);
    expect(JSON.parse(failing.stdout)).to.include({ success: false, sent: 1, failed: 1 });

    const rollback = await runJson(['migrate:rollback', '--plugin', 'server-monitor', '--to', '1.1'], env());
    const at12 = [
      '1.2/01-notification-administrators',
      '1.2/02-dispatch-times',
      '1.2/03-server-states',
      '1.2/04-sealed-endpoint-credentials',
      '1.2/05-hashed-heartbeat-tokens',
      '1.2/06-sealed-endpoint-query-secrets',
      '1.2/07-alert-heartbeats',
    ];
    expect(rollback.rolledBack).to.deep.equal([{ plugin: 'server-monitor', reverted: [...at12].reverse() }]);
    const at11 = await runCli(['migrate:status'], env());
    expect(at11.code).to.equal(0);
    expect(at11.stdout).to.match(
      new RegExp(
        `^server-monitor \\(release 1\\.2\\.\\d+, at 1\\.1\\): \\d+ applied, ${at12.length} pending \\(${at12.join(', ').replace(/\./g, '\\.')}\\)$`,
        'm',
      ),
    );
    // The setting is back in its 1.1 shape: the e-mail list and the SMS flag.
    const setting = await knex('monitor_notification_settings').where({ organization_id: 1 }).first();
    expect(JSON.parse(setting.emails)).to.deep.equal(['ops@acme.test']);
    expect(Boolean(setting.sms_enabled)).to.equal(true);
  }).timeout(180_000);
});
