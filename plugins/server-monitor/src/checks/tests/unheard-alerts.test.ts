import { expect } from 'chai';
import { describeEachBackend, recordingLogger, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { AlertService } from '../../alerts';
import { CheckWorker } from '../check-worker';
import { addServer, monitorFixture, MonitorFixture, organization, user } from '../../shared/tests/support';
import { Farm, httpFarm } from '../../shared/tests/farm';

/**
 * Issue 25: an outage with no one to tell is recorded as such in the status log, logged at warn level, and
 * told to the first administrator who appears while it lasts; a recovery of an outage nobody heard of is
 * told to no one.
 */
describeEachBackend('server-monitor: alerts nobody heard', (backend) => {
  let f: MonitorFixture;
  let farm: Farm;
  let sink: SmtpSink;
  const log = recordingLogger('warn');
  before(async () => {
    farm = await httpFarm();
    sink = await smtpSink();
    f = await monitorFixture(backend(), { env: { SMTP_URL: sink.url }, logger: log.logger });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await Promise.all([farm?.close(), sink?.close()]);
  });

  const container = () => f.engine.contexts.get('server-monitor')!.container;
  const tellUnheard = () => container().resolve(AlertService).tellUnheard();
  const check = (id: number) => container().resolve(CheckWorker).run(id);
  const alertsOf = (server: number) =>
    f.engine
      .knex('monitor_alerts')
      .where({ server_id: server })
      .orderBy('id')
      .select('kind', 'channel', 'recipient', 'state');
  const mailsTo = (address: string) => sink.to(address);
  const parsed = async (address: string, i: number) => sink.to(address)[i].parse();

  it('keeps a DOWN nobody could hear, logs it, and tells the first administrator who appears while it lasts', async () => {
    const org = await organization(f.engine, { plan: 'pro' });
    farm.set('lonely', 503);
    const server = await addServer(f.engine, org, `${farm.url}/switch/lonely`, { title: 'Lonely' });
    await check(server);
    expect(await alertsOf(server)).to.deep.equal([
      { kind: 'server-down', channel: 'none', recipient: '', state: 'unheard' },
    ]);
    const logged = await f.engine
      .knex('monitor_logs')
      .where({ server_id: server, updated_status: 'unheard' })
      .first('note');
    expect(logged.note).to.match(/^DOWN: Lonely: no one to tell/);
    expect(
      log.entries.some((e) => e.level === 40 && e.serverId === server && /no one to tell/.test(String(e.msg))),
    ).to.equal(true);

    // Still nobody: it stays unheard.
    expect(await tellUnheard()).to.equal(0);
    expect((await alertsOf(server))[0].state).to.equal('unheard');

    await user(f.engine, org, { email: 'first@lonely.test' });
    expect(await tellUnheard()).to.equal(1);
    await waitFor(() => mailsTo('first@lonely.test').length === 1, 10_000);
    const late = await parsed('first@lonely.test', 0);
    expect(late.subject).to.equal('DOWN: Lonely');
    expect(late.text).to.contain('when the organization had no one to alert');
    expect(await tellUnheard()).to.equal(0);

    // The outage was heard: its end is told.
    farm.set('lonely', 200);
    await check(server);
    await waitFor(() => mailsTo('first@lonely.test').length === 2, 10_000);
    expect((await parsed('first@lonely.test', 1)).subject).to.equal('UP again: Lonely');
    expect((await alertsOf(server)).map((a) => a.state)).to.deep.equal(['told', 'sent', 'sent']);
  });

  it('tells no one of a recovery whose outage nobody heard, nor the outage once it ended', async () => {
    const org = await organization(f.engine, { plan: 'pro' });
    farm.set('brief', 500);
    const server = await addServer(f.engine, org, `${farm.url}/switch/brief`, { title: 'Brief' });
    await check(server);
    farm.set('brief', 200);
    await check(server);
    expect(await alertsOf(server)).to.deep.equal([
      { kind: 'server-down', channel: 'none', recipient: '', state: 'lapsed' },
    ]);

    await user(f.engine, org, { email: 'late@brief.test' });
    expect(await tellUnheard()).to.equal(0);
    // Down again, now with someone to tell: told at once.
    farm.set('brief', 500);
    await check(server);
    await waitFor(() => mailsTo('late@brief.test').length === 1, 10_000);
    expect((await parsed('late@brief.test', 0)).subject).to.equal('DOWN: Brief');
  });

  it('tells no one of a recovery whose DOWN could not be delivered to anyone (every try failed)', async () => {
    const org = await organization(f.engine, { plan: 'pro' });
    await user(f.engine, org, { email: 'ops@lost.test' });
    farm.set('lost', 503);
    const server = await addServer(f.engine, org, `${farm.url}/switch/lost`, { title: 'Lost' });
    await check(server);
    await waitFor(() => mailsTo('ops@lost.test').length === 1, 10_000);
    // As if the relay had refused all its tries.
    await f.engine.knex('monitor_alerts').where({ server_id: server }).update({ state: 'failed', error: 'relay down' });
    farm.set('lost', 200);
    await check(server);
    expect((await alertsOf(server)).map((a) => [a.kind, a.state])).to.deep.equal([['server-down', 'failed']]);
  });
});
