import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend, waitFor } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import { ApiClient, apiClient, createTenant, createTestEngine, TestTenant } from '@switchboard/core/testing';
import type { Engine } from '@switchboard/core';
import { cliEnv, exitOf, freePort, runCli, runJson, startCli } from '../src/cli';

describeEachBackend('switchboard CLI', (backend) => {
  const env = () => cliEnv(backend(), 'users-projects');
  const campaignEnv = () => ({ ...env(), PLUGINS: 'campaign' });

  /** An engine with the campaign plugin and a tenant, beside the CLI processes of a test. */
  async function withCampaign(test: (c: { engine: Engine; tenant: TestTenant; api: ApiClient }) => Promise<void>) {
    const engine = await createTestEngine(backend(), { plugins: [campaign] });
    const server = engine.http().listen(0);
    try {
      const tenant = await createTenant(engine);
      await test({ engine, tenant, api: apiClient(server, '/api/campaign', tenant) });
    } finally {
      server.close();
      await engine.close();
    }
  }

  it('migrates, reports status and rolls back per plugin', async function () {
    // A node process per command: ~1 s each on a slow host; ~7 s under .ci/run on a slow day.
    this.timeout(60_000);
    const migrated = await runJson(['migrate'], env());
    expect(migrated.migrated.map((r: { plugin: string }) => r.plugin)).to.deep.equal(['core', 'users-projects']);
    expect(migrated.migrated[1].applied).to.deep.equal(['1.0/01-create-users', '1.0/02-create-projects']);
    const status = await runJson(['migrate:status'], env());
    expect(status.status.every((s: { pending: string[] }) => s.pending.length === 0)).to.equal(true);

    const rolled = await runJson(['migrate:rollback', '--plugin', 'users-projects', '--to', '0'], env());
    expect(rolled.rolledBack[0].reverted).to.have.members(['1.0/01-create-users', '1.0/02-create-projects']);
    const after = await runJson(['migrate:status'], env());
    expect(after.status.find((s: { plugin: string }) => s.plugin === 'users-projects').pending).to.have.length(2);
    const again = await runJson(['migrate', '--plugin', 'users-projects'], env());
    expect(again.migrated[0].applied).to.have.length(2);
  });

  it('creates an organization and a token that the API accepts, then revokes it', async function () {
    // A node process per command: ~1 s each on a slow host; ~7 s under .ci/run on a slow day.
    this.timeout(60_000);
    await runJson(['migrate'], env());
    const org = await runJson(['org:create', '--name', 'Acme', '--plan', 'pro'], env());
    expect(org).to.include({ name: 'Acme', selected_plan: 'pro', subscription_status: 'active' });
    const token = await runJson(
      [
        'token:create',
        '--org',
        String(org.id),
        '--name',
        'ci',
        '--permissions',
        'users:read,projects:*',
        '--ip',
        '127.0.0.1,10.0.0.0/8',
      ],
      env(),
    );
    expect(token.token).to.match(/^sb_/);
    expect(token.permissions).to.deep.equal(['users:read', 'projects:*']);
    expect(token.ip_whitelist).to.deep.equal(['127.0.0.1', '10.0.0.0/8']);

    const port = await freePort();
    const server = startCli(['serve', '--no-scheduler'], { ...env(), PORT: String(port) });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${base}/health`).catch(() => null))?.ok === true, 20_000);
      await request(base).get('/api/v1/users').set('Authorization', `Bearer ${token.token}`).expect(200);
      await request(base)
        .post('/api/v1/users')
        .set('Authorization', `Bearer ${token.token}`)
        .send({ name: 'a', email: 'a@b.co' })
        .expect(403);
      const revoked = await runCli(['token:revoke', String(token.id)], env());
      expect(revoked.code).to.equal(0);
      expect(revoked.stdout).to.contain(`Token ${token.id} revoked`);
    } finally {
      server.kill('SIGTERM');
      expect(await exitOf(server)).to.equal(0);
    }
  });

  it('explains bad input with exit code 1 and no stack trace', async function () {
    this.timeout(60_000);
    const plan = await runCli(['org:create', '--name', 'X', '--plan', 'gold'], env());
    expect(plan.code).to.equal(1);
    expect(plan.stderr).to.contain('--plan must be one of free, basic, pro, enterprise');
    const perm = await runCli(
      ['token:create', '--org', '1', '--name', 'x', '--permissions', 'nukes:fire', '--json'],
      env(),
    );
    expect(perm.code).to.equal(1);
    expect(JSON.parse(perm.stderr)).to.deep.equal({
      error: '--permissions: unknown resource "nukes" (known: projects, users)',
    });
    const missing = await runCli(['token:revoke', '987654'], env());
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.equal('Error: Token 987654 does not exist\n');
    // Ids are digits as typed: 0x1 is not token 1, 1e0 is not organization 1.
    const loose = await runCli(['token:revoke', '0x1'], env());
    expect(loose.code).to.equal(1);
    expect(loose.stderr).to.equal('Error: Token 0x1 does not exist\n');
    const looseOrg = await runCli(['token:create', '--org', '1e0', '--name', 'x'], env());
    expect(looseOrg.code).to.equal(1);
    expect(looseOrg.stderr).to.equal('Error: --org must be an organization id\n');
    // Year 49 would read back as 1949 or 2049 (a Date of a year under 100): a long-expired token valid again.
    const ancient = await runCli(
      ['token:create', '--org', '1', '--name', 'x', '--expires', '0049-01-01T00:00:00Z'],
      env(),
    );
    expect(ancient.code).to.equal(1);
    expect(ancient.stderr).to.equal('Error: --expires must be a time between 1970 and 9999\n');
    // An empty --ip (a script's unset variable) is not "from anywhere"; an empty name names nothing.
    const noIp = await runCli(['token:create', '--org', '1', '--name', 'x', '--ip', ' '], env());
    expect([noIp.code, noIp.stderr]).to.deep.equal([1, 'Error: --ip must name at least one address or range\n']);
    const noName = await runCli(['token:create', '--org', '1', '--name', ''], env());
    expect([noName.code, noName.stderr]).to.deep.equal([1, 'Error: --name must not be empty\n']);
    // Not ISO 8601, or a day that does not exist: refused (Date took `1` as 2001 and 2030-02-30 as 2 March).
    for (const expires of ['1', '2030-02-30'])
      expect(
        (await runCli(['token:create', '--org', '1', '--name', 'x', '--expires', expires], env())).stderr,
      ).to.equal('Error: --expires must be an ISO 8601 timestamp (2030-01-31 or 2030-01-31T12:00:00Z)\n');
  });

  it("merges the campaign search index's rows with campaign:search-compact", async function () {
    this.timeout(60_000);
    await withCampaign(async ({ engine, tenant, api }) => {
      const indexRows = async () => Number((await engine.knex('subscriber_grams').count({ n: '*' }))[0].n);
      // Each write adds its own rows to the block it touches.
      for (const email of ['ada@x.test', 'adam@x.test', 'nevada@x.test'])
        await api.post('/subscribers', { email, confirmed: true }).expect(201);
      const rowsTotal = await indexRows();
      const report = await runJson(['campaign:search-compact', '--org', String(tenant.organizationId)], campaignEnv());
      expect(report.complete).to.equal(true);
      expect(report.rowsBefore).to.be.greaterThan(report.rowsAfter);
      expect(report.blocks).to.be.greaterThan(0);
      expect(report.rowsAfter).to.equal(report.blocks);
      expect(await indexRows()).to.equal(rowsTotal - report.rowsBefore + report.rowsAfter);
      expect((await runJson(['campaign:search-compact'], campaignEnv())).blocks).to.equal(0);
      const found = await api.get('/subscribers?search=ada').expect(200);
      expect(found.body.data.map((s: { email: string }) => s.email)).to.deep.equal([
        'ada@x.test',
        'adam@x.test',
        'nevada@x.test',
      ]);
    });
    const unknown = await runCli(['campaign:search-compact', '--org', '987654'], campaignEnv());
    expect([unknown.code, unknown.stderr]).to.deep.equal([1, 'Error: Organization 987654 not found\n']);
    const loose = await runCli(['campaign:search-compact', '--org', '0x1'], campaignEnv());
    expect(loose.code).to.equal(1);
    expect(loose.stderr).to.contain('--org must be an organization id');
  });

  it("rebuilds a message's statistics from its records with campaign:stats-rebuild", async function () {
    this.timeout(60_000);
    await withCampaign(async ({ engine, tenant, api }) => {
      const message = (await api.post('/messages', { name: 'M', subject: 'S' }).expect(201)).body.data.id;
      // Counters that no record supports: the rebuild takes them back to what the records say.
      await engine.knex('messages').where({ id: message }).update({ count_delivered: 7, count_read: 3 });
      const args = ['campaign:stats-rebuild', '--org', String(tenant.organizationId), '--message', String(message)];
      const rebuilt = await runJson(args, campaignEnv());
      expect(rebuilt).to.include({ count_delivered: 0, count_read: 0, count_stop: 0 });
      expect((await api.get(`/messages/${message}/stats`).expect(200)).body.data.summary).to.include({
        delivered: 0,
        opened: 0,
      });
      const missing = await runCli(
        ['campaign:stats-rebuild', '--org', String(tenant.organizationId), '--message', '999999'],
        campaignEnv(),
      );
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.contain('Message 999999 not found');
      // Queued only where a worker can take it (Redis), and only for a message there is.
      const queued = await runCli([...args, '--queue', '--json'], campaignEnv());
      if (backend().redisUrl) expect(JSON.parse(queued.stdout)).to.deep.equal({ queued: true });
      else
        expect(JSON.parse(queued.stderr)).to.deep.equal({
          error: '--queue needs REDIS_URL (a worker takes the job from Redis); without it, leave --queue out',
        });
    });
  });

  it('answers usage errors with --json as one JSON object, and says what a database never migrated lacks', async function () {
    this.timeout(60_000);
    for (const [args, error] of [
      [['migrate:status', '--json', '--bogus'], "unknown option '--bogus'"],
      [['token:create', '--org', '1', '--json'], "required option '--name <name>' not specified"],
    ] as const) {
      const run = await runCli([...args], env());
      expect(run.code).to.equal(1);
      expect(JSON.parse(run.stderr)).to.deep.equal({ error });
    }
    // A data folder never migrated (the embedded default).
    const fresh = fs.mkdtempSync(path.join(backend().dataDir, 'fresh-'));
    const freshEnv = { DATA_DIR: fresh, PLUGINS: 'users-projects,server-monitor' };
    const beat = await runCli(['servermonitor:heartbeat:create', '--server', '1', '--interval', '60'], freshEnv);
    expect(beat.code).to.equal(1);
    expect(beat.stderr).to.match(
      /^Error: the database is not migrated to this version: run `switchboard migrate` first/,
    );
    const rollback = await runCli(['migrate:rollback'], freshEnv);
    expect(rollback.stdout).to.equal('nothing to revert\n');
  });

  it("recomputes analytics' daily figures from the rows with campaign:analytics:rebuild", async function () {
    this.timeout(60_000);
    await withCampaign(async ({ engine, tenant, api }) => {
      for (const email of ['ada@x.test', 'bob@x.test'])
        await api.post('/subscribers', { email, confirmed: true }).expect(201);
      const live = (await api.get('/analytics/growth').expect(200)).body.data;
      expect(live.current_period.new_subscribers).to.equal(2);
      // Figures lost (a restore of part of the database): the command counts them in again.
      await engine.knex('analytics_daily').where({ organization_id: tenant.organizationId }).delete();
      expect((await api.get('/analytics/growth').expect(200)).body.data.current_period.new_subscribers).to.equal(0);
      const args = ['campaign:analytics:rebuild', '--org', String(tenant.organizationId)];
      const report = await runJson(args, campaignEnv());
      expect(report).to.include({ organizations: 1 });
      expect(report.rows).to.be.greaterThan(0);
      expect((await api.get('/analytics/growth').expect(200)).body.data).to.deep.equal(live);
    });
    const loose = await runCli(['campaign:analytics:rebuild', '--org', 'x'], campaignEnv());
    expect(loose.code).to.equal(1);
    expect(loose.stderr).to.contain('--org must be an organization id');
  });

  it('publishes changelog entries from a folder of releases and from --title/--body, each once', async function () {
    this.timeout(60_000);
    await withCampaign(async ({ engine, api }) => {
      await api.post('/changelog/subscribe', { email: 'dev@x.test' }).expect(201);
      // Its address confirms (the mailed link: campaign's changelog-notices test); only then is it sent notices.
      await engine.knex('changelog_addresses').update({ confirmed_at: new Date() });
      const releases = path.join(backend().dataDir, 'releases');
      fs.mkdirSync(releases, { recursive: true });
      // Saved with a byte-order mark, beside a folder whose name ends in .md: neither changes what is read.
      fs.writeFileSync(path.join(releases, '2026-11-01-v1.9.md'), '\uFEFF# Provider webhooks\n\nAll five providers.\n');
      fs.mkdirSync(path.join(releases, 'drafts.md'));
      fs.writeFileSync(path.join(releases, '2026-11-25-v1.10.md'), '# Analytics\n\nLive figures.\n');
      const first = await runJson(['campaign:changelog:publish', '--from', releases], campaignEnv());
      expect(first.published.map((p: { key: string }) => p.key)).to.deep.equal(['2026-11-01-v1.9', '2026-11-25-v1.10']);
      expect(first.published.map((p: { notices: number }) => p.notices)).to.deep.equal([1, 1]);
      const again = await runCli(['campaign:changelog:publish', '--from', releases], campaignEnv());
      expect(again.code).to.equal(0);
      expect(again.stdout).to.contain('skipped 2026-11-25-v1.10: published before');
      const single = await runJson(
        ['campaign:changelog:publish', '--title', 'Webhooks', '--body', 'Outbound.', '--key', 'v1.11'],
        campaignEnv(),
      );
      expect(single.published).to.deep.equal([{ key: 'v1.11', title: 'Webhooks', notices: 1 }]);
      expect(await engine.knex('changelog_entries').orderBy('id').pluck('title')).to.deep.equal([
        'Provider webhooks',
        'Analytics',
        'Webhooks',
      ]);
    });
    const missing = await runCli(['campaign:changelog:publish', '--title', 'x'], campaignEnv());
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain('--title and --body are required (or --from)');
    // --key beside --from (each file names its own), a key past its column, a body past MySQL's TEXT.
    for (const [args, said] of [
      [['--from', '/tmp', '--key', 'k'], 'give --from, or --title and --body (and --key)'],
      [['--title', 't', '--body', 'b', '--key', 'k'.repeat(192)], 'a key has 191 characters at most (entry 1)'],
      [['--title', 't', '--body', 'b'.repeat(65_536), '--key', 'long'], 'long: the body is over 65535 bytes (64 KiB)'],
    ] as const) {
      const refused = await runCli(['campaign:changelog:publish', ...args], campaignEnv());
      expect([refused.code, refused.stderr]).to.deep.equal([1, `Error: ${said}\n`]);
    }
    const nowhere = await runCli(['campaign:changelog:publish', '--from', '/nonexistent/releases'], campaignEnv());
    expect(nowhere.code).to.equal(1);
    expect(nowhere.stderr).to.contain('/nonexistent/releases: no such file or folder');
  });

  it('stops start-up with a message saying what to fix when a plugin is missing', async function () {
    this.timeout(60_000);
    const run = await runCli(['migrate:status'], { ...env(), PLUGINS: 'users-projects,no-such-plugin' });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain('npm install @switchboard/plugin-no-such-plugin');
  });
});
