import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { listTables, SecretBox, SERVICES } from '@switchboard/core';
import { describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { ServerImporter } from '../importer';
import { CheckWorker } from '../../checks';
import { openEndpoint } from '../../shared/endpoints';
import { monitorFixture, MonitorFixture, user } from '../../shared/tests/support';
import { Farm, httpFarm } from '../../shared/tests/farm';

describeEachBackend('server-monitor: endpoint credentials', (backend) => {
  let f: MonitorFixture;
  let farm: Farm;
  let sink: SmtpSink;
  let dir: string;
  before(async () => {
    farm = await httpFarm();
    sink = await smtpSink();
    f = await monitorFixture(backend(), { env: { SMTP_URL: sink.url } });
    f.engine.startWorkers();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-credentials-'));
  });
  after(async () => {
    await f?.close();
    await farm?.close();
    await sink?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Every value of every table, as text. */
  const everything = async () => {
    const values: string[] = [];
    for (const table of await listTables(f.engine.knex))
      for (const row of await f.engine.knex(table).select()) values.push(...Object.values(row).map(String));
    return values;
  };

  it('imports https://user:secret@... with the password sealed: checked with it, stored, logged and alerted without it', async () => {
    const port = new URL(farm.httpsUrl).port;
    const endpoint = `https://user:secret@127.0.0.1:${port}/switch/locked`;
    const masked = `https://user:***@127.0.0.1:${port}/switch/locked`;
    const file = path.join(dir, 'servers.csv');
    fs.writeFileSync(
      file,
      [
        'title,endpoint,organization_name',
        `Locked,${endpoint},Credentials Inc`,
        `Again,${endpoint},Credentials Inc`,
        `Other account,https://user:another@127.0.0.1:${port}/switch/locked,Credentials Inc`,
      ].join('\n'),
    );
    const container = f.engine.contexts.get('server-monitor')!.container;
    const result = await container.resolve(ServerImporter).import(file);
    expect(result).to.include({ imported: 2, errors: 1 });
    // The same server again is a duplicate, named without its password; another password requests as
    // another account: another server, though both are shown alike.
    expect(result.error_rows).to.deep.equal([
      { line: 3, message: `duplicate: ${masked} is already a server of this organization` },
    ]);

    const row = await f.engine.knex('monitor_servers').where({ title: 'Locked' }).first();
    expect(row.endpoint).to.equal(masked);
    expect(row.endpoint_secret).to.match(/^v1:/);
    expect(openEndpoint(row, f.engine.container.resolve<SecretBox>(SERVICES.SecretBox))).to.equal(endpoint);

    await user(f.engine, Number(row.organization_id), { email: 'locked@acme.test' });
    farm.set('locked', 503);
    expect(await container.resolve(CheckWorker).run(Number(row.id))).to.include({ up: false, status: '503' });
    const basic = `Basic ${Buffer.from('user:secret').toString('base64')}`;
    expect(farm.headers.get('/switch/locked')?.authorization).to.equal(basic);

    const log = await f.engine.knex('monitor_logs').where({ server_id: row.id }).first();
    expect(log.note).to.equal(`${masked} failed (answered 503)`);
    await waitFor(() => sink.to('locked@acme.test').length === 1, 10_000);
    const alert = await sink.to('locked@acme.test')[0].parse();
    expect(alert.text).to.contain(`Locked (${masked}) is down`);
    expect(alert.text).to.not.contain('secret');
    const alertRow = await f.engine.knex('monitor_alerts').where({ server_id: row.id }).first();
    expect(alertRow.body).to.contain(masked);

    const values = await everything();
    expect(values.filter((v) => v.includes(masked))).to.have.length.of.at.least(3);
    expect(values.filter((v) => v.includes('secret'))).to.deep.equal([]);
  });

  it('seals a token in the query (?token=) the same way: checked with it, logged and alerted with ***', async () => {
    const endpoint = `${farm.url}/switch/keyed?region=eu&token=t0k3n-9`;
    const masked = `${farm.url}/switch/keyed?region=eu&token=***`;
    const file = path.join(dir, 'keyed.csv');
    fs.writeFileSync(file, ['title,endpoint,organization_name', `Keyed,${endpoint},Keyed Inc`].join('\n'));
    const container = f.engine.contexts.get('server-monitor')!.container;
    expect(await container.resolve(ServerImporter).import(file)).to.include({ imported: 1, errors: 0 });
    const row = await f.engine.knex('monitor_servers').where({ title: 'Keyed' }).first();
    expect(row.endpoint).to.equal(masked);

    await user(f.engine, Number(row.organization_id), { email: 'keyed@acme.test' });
    farm.set('keyed', 500);
    expect(await container.resolve(CheckWorker).run(Number(row.id))).to.include({ up: false, status: '500' });
    // Asked with the token (a failure is asked again to confirm it), never with the mask.
    expect(farm.hits.get('/switch/keyed?region=eu&token=t0k3n-9')).to.be.at.least(1);
    expect(farm.hits.has('/switch/keyed?region=eu&token=***')).to.equal(false);
    const log = await f.engine.knex('monitor_logs').where({ server_id: row.id }).first();
    expect(log.note).to.equal(`${masked} failed (answered 500)`);
    await waitFor(() => sink.to('keyed@acme.test').length === 1, 10_000);
    expect((await sink.to('keyed@acme.test')[0].parse()).text).to.contain(`Keyed (${masked}) is down`);
    expect((await everything()).filter((v) => v.includes('t0k3n'))).to.deep.equal([]);
  });
});
