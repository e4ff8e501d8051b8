import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { Knex } from 'knex';
import request from 'supertest';
import { createKnex } from '@switchboard/core';
import { describeEachBackend, waitFor } from '@switchboard/core/testing';
import { Farm, httpFarm } from '@switchboard/plugin-server-monitor/dist/src/shared/tests/farm';
import { cliEnv, exitOf, freePort, runCli, runJson, startCli } from '../src/cli';

const KEY = 'cli-servers-key-0123456789';

/** Issue 25: an operator adds, finds and removes servers from the command line, beside a running serve. */
describeEachBackend('server-monitor servers from the command line', (backend) => {
  let farm: Farm;
  let dataDir: string;
  let knex: Knex;
  before(async () => {
    farm = await httpFarm();
    // Its own data folder: what a serve records there is this test's.
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-servers-cli-'));
    knex = createKnex(backend().databaseUrl);
  });
  after(async () => {
    await knex?.destroy();
    await farm?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const env = () =>
    cliEnv(backend(), 'users-projects,server-monitor', { DATA_DIR: dataDir, SERVER_MONITOR_API_KEY: KEY });

  it('adds servers, lists what is down (longest first), prints ping URLs of the running serve, removes', async () => {
    await runJson(['migrate'], env());
    const now = new Date();
    const [org] = await knex('organizations').insert({
      name: 'Servers CLI Inc',
      selected_plan: 'pro',
      subscription_status: 'active',
      created_at: now,
      updated_at: now,
    });
    const add = (title: string, endpoint: string) =>
      runJson(
        ['servermonitor:server:add', '--organization', String(org), '--title', title, '--endpoint', endpoint],
        env(),
      );
    const web = await add('Web', `${farm.url}/status/200`);
    expect(web).to.include({ title: 'Web', state: 'pending', organization_id: Number(org) });
    const dead = await add('Dead port', `${farm.url}/status/503`);
    const bad = await runCli(
      ['servermonitor:server:add', '--organization', String(org), '--title', 'X', '--endpoint', 'ftp://x'],
      env(),
    );
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.contain('endpoint');
    const nowhere = await runCli(
      ['servermonitor:server:add', '--organization', '999999', '--title', 'X', '--endpoint', 'https://x.example'],
      env(),
    );
    expect(nowhere.code).to.equal(1);
    expect(nowhere.stderr).to.contain('Organization 999999 not found');

    // serve on a port of its own, no PUBLIC_URL anywhere: the commands beside it name that port.
    const port = await freePort();
    const serve = startCli(['serve', '--no-scheduler'], { ...env(), PORT: String(port) });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${base}/health`).catch(() => null))?.ok === true, 20_000);
      const beat = await runJson(
        ['servermonitor:heartbeat:create', '--server', String(web.id), '--interval', '60'],
        env(),
      );
      expect(beat.ping_url.startsWith(`${base}/api/servermonitor/ping/`), beat.ping_url).to.equal(true);
      await request(base).get(new URL(beat.ping_url).pathname).expect(200);

      await runJson(['servermonitor:checkserverstatus'], env());
      await waitFor(
        async () => (await knex('monitor_servers').whereNull('last_checked_at').count({ n: '*' }))[0].n == 0,
        20_000,
      );
    } finally {
      serve.kill('SIGTERM');
      await exitOf(serve);
    }

    // A server of an organization whose subscription ended is checked no more: its old DOWN is not listed.
    const [ended] = await knex('organizations').insert({
      name: 'Ended Inc',
      selected_plan: 'pro',
      subscription_status: 'inactive',
      created_at: now,
      updated_at: now,
    });
    await knex('monitor_servers').insert({
      organization_id: ended,
      title: 'Stale',
      endpoint: 'https://stale.example/',
      state: 'down',
      failing_since: new Date(now.getTime() - 86_400_000),
      created_at: now,
      updated_at: now,
    });
    const down = await runJson(['servermonitor:servers', '--down'], env());
    expect(down.total).to.equal(1);
    expect(down.servers[0]).to.include({ id: dead.id, state: 'down', status: '503', plan: 'pro' });
    expect(down.servers[0].down_since).to.be.a('string');
    const human = await runCli(['servermonitor:servers', '--down'], env());
    expect(human.code).to.equal(0);
    expect(human.stdout).to.match(/DOWN\s+Dead port </);
    expect(human.stdout).to.contain('1 of 1 down servers');
    // A title a tenant wrote with a line break in it stays in its row: it cannot print a row of its own.
    const [fake] = await knex('monitor_servers').insert({
      organization_id: org,
      title: 'Foxtrot\n     7  UP       Payments <https://pay.example/>',
      endpoint: 'https://fox.example/',
      state: 'down',
      failing_since: new Date(now.getTime() - 60_000),
      created_at: now,
      updated_at: now,
    });
    const rows = (await runCli(['servermonitor:servers', '--down'], env())).stdout.split('\n');
    expect(rows.filter((row) => /^\s+\d+\s+(UP|DOWN)\s/.test(row))).to.have.length(2);
    expect(rows.some((row) => row.includes('DOWN     Foxtrot\\n     7  UP'))).to.equal(true);
    await knex('monitor_servers').where({ id: fake }).delete();
    const mine = await runJson(['servermonitor:servers', '--organization', String(org)], env());
    expect(mine.servers.map((s: { id: number; state: string }) => [s.id, s.state])).to.deep.equal([
      [web.id, 'up'],
      [dead.id, 'down'],
    ]);
    expect(
      (await runJson(['servermonitor:servers', '--plan', 'free', '--organization', String(org)], env())).total,
    ).to.equal(0);
    expect((await runCli(['servermonitor:servers', '--state', 'asleep'], env())).code).to.equal(1);

    const removed = await runJson(['servermonitor:server:remove', String(dead.id)], env());
    expect(removed).to.deep.equal({ removed: dead.id, title: 'Dead port' });
    expect((await runJson(['servermonitor:servers', '--organization', String(org)], env())).total).to.equal(1);
    const again = await runCli(['servermonitor:server:remove', String(dead.id)], env());
    expect(again.code).to.equal(1);
    expect(again.stderr).to.contain(`Server ${dead.id} not found`);
  }).timeout(180_000);
});
