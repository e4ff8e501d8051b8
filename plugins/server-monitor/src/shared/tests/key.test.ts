import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { describeEachBackend, recordingLogger } from '@switchboard/core/testing';
import { MONITOR_KEY_FILE } from '../key';
import { API_KEY, monitorFixture, MonitorFixture } from './support';

describeEachBackend('server-monitor: the API key', (backend) => {
  let dataDir: string;
  let fixtures: MonitorFixture[];
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-key-'));
    fixtures = [];
  });
  afterEach(async () => {
    for (const f of fixtures) await f.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const denied = { success: false, message: 'Invalid API key' };

  /** An engine on this test's data folder; its log from info up when a recorder is given. */
  const open = async (env: Record<string, string>, logger?: ReturnType<typeof recordingLogger>) => {
    const f = await monitorFixture(backend(), { env: { DATA_DIR: dataDir, ...env }, logger: logger?.logger });
    fixtures.push(f);
    return f;
  };

  it('local without SERVER_MONITOR_API_KEY: generates one into DATA_DIR (0600) that every route takes, keeps it for the next start, says where it is; the variable wins', async function () {
    this.timeout(60_000);
    const log = recordingLogger('info');
    const first = await open({ SERVER_MONITOR_API_KEY: '' }, log);
    const file = path.join(dataDir, MONITOR_KEY_FILE);
    const key = fs.readFileSync(file, 'utf8');
    expect(key).to.match(/^[0-9a-f]{48}$/);
    expect(fs.statSync(file).mode & 0o777).to.equal(0o600);

    const status = await first.call('/worker-status', key).expect(200);
    expect(status.body.dashboard_url).to.match(new RegExp(`/api/servermonitor/dashboard/${key}$`));
    await first
      .call('/dashboard', key)
      .expect(200)
      .expect('Content-Type', /text\/html/);
    expect((await first.call('/worker-status', API_KEY).expect(403)).body).to.deep.equal(denied);
    await first.engine.startPlugins();
    const said = log.entries.filter((e) => e.file === file);
    expect(said.map((e) => e.level)).to.deep.equal([30]);
    expect(said[0].msg).to.contain(`generated into ${file}`).and.contain(`cat ${file}`).and.not.contain(key);

    const second = await open({ SERVER_MONITOR_API_KEY: '' }, log);
    await second.call('/worker-status', key).expect(200);
    await second.engine.startPlugins();
    expect(log.entries.filter((e) => e.file === file).pop()?.msg).to.contain(`kept in ${file}`);
    expect(fs.readFileSync(file, 'utf8')).to.equal(key);

    const given = await open({ SERVER_MONITOR_API_KEY: API_KEY });
    await given.call('/worker-status', API_KEY).expect(200);
    expect((await given.call('/worker-status', key).expect(403)).body).to.deep.equal(denied);

    fs.writeFileSync(file, '\n');
    const emptied = await open({ SERVER_MONITOR_API_KEY: '' }).then(
      () => null,
      (err: Error) => err.message,
    );
    expect(emptied).to.equal(`${file} is empty: delete it for a new key, or set SERVER_MONITOR_API_KEY`);
  });

  it('staging and production refuse a key under 24 characters saying how to make one; unset, no key is generated, every route answers 403 and start-up warns', async function () {
    this.timeout(60_000);
    const refusal = (env: Record<string, string>) =>
      open(env).then(
        () => null,
        (err: Error) => err.message,
      );
    expect(await refusal({ APP_ENV: 'staging', SERVER_MONITOR_API_KEY: 'smkey123' })).to.equal(
      'SERVER_MONITOR_API_KEY is 8 characters long; APP_ENV=staging needs at least 24, as anyone who reaches /api/servermonitor/ may try keys: make one with `openssl rand -hex 24` (48 characters)',
    );
    expect(await refusal({ APP_ENV: 'production', SERVER_MONITOR_API_KEY: 'k'.repeat(23) })).to.match(
      /^SERVER_MONITOR_API_KEY is 23 characters long; APP_ENV=production needs at least 24/,
    );
    const long = await open({ APP_ENV: 'production', SERVER_MONITOR_API_KEY: 'k'.repeat(24) });
    await long.call('/worker-status', 'k'.repeat(24)).expect(200);

    const log = recordingLogger('info');
    const unset = await open({ APP_ENV: 'production', SERVER_MONITOR_API_KEY: '' }, log);
    expect(fs.existsSync(path.join(dataDir, MONITOR_KEY_FILE))).to.equal(false);
    expect((await unset.call('/worker-status', '').expect(403)).body).to.deep.equal(denied);
    expect((await unset.call('/check/all', API_KEY).expect(403)).body).to.deep.equal(denied);
    await unset.engine.startPlugins();
    expect(log.entries.filter((e) => e.level === 40).map((e) => e.msg)).to.deep.equal([
      'SERVER_MONITOR_API_KEY is unset: every server-monitor route answers 403 Invalid API key; make one with `openssl rand -hex 24`',
    ]);
  });
});
