import { expect } from 'chai';
import { describeEachBackend, ManualClock, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { AlertKind, AlertService, MAX_ATTEMPTS } from '../alert-service';
import {
  addServer,
  monitorFixture,
  MonitorFixture,
  notificationSetting,
  organization,
  user,
} from '../../shared/tests/support';
import { Farm, httpFarm } from '../../shared/tests/farm';
import { smsStub, SmsStub } from '../../shared/tests/sms-stub';

const SMS_PATH = '/2010-04-01/Accounts/AC0123/Messages.json';

/** A try that waited for the alert raised before it (no try spent). */
const WAITS = 'waits for the alert raised before it to this recipient to be sent first';

describeEachBackend('server-monitor: alerts', (backend) => {
  let f: MonitorFixture;
  let farm: Farm;
  let sink: SmtpSink;
  let sms: SmsStub;
  /** Addresses the SMTP sink refuses once (451, try again later). */
  const refuseOnce = new Set<string>();
  const clock = new ManualClock(new Date());
  before(async () => {
    farm = await httpFarm();
    sink = await smtpSink({ refuse: (address) => (refuseOnce.delete(address) ? 451 : null) });
    sms = await smsStub();
    f = await monitorFixture(backend(), {
      clock,
      env: {
        SMTP_URL: sink.url,
        SMS_DRIVER: 'http',
        SMS_URL: `${sms.url}${SMS_PATH}`,
        SMS_FROM: '+15550000',
        SMS_USER: 'AC0123',
        SMS_PASSWORD: 'auth-token',
      },
    });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await Promise.all([farm?.close(), sink?.close(), sms?.close()]);
  });

  const alerts = () => f.engine.contexts.get('server-monitor')!.container.resolve(AlertService);
  const rows = (where: Record<string, unknown>) =>
    f.engine
      .knex('monitor_alerts')
      .where(where)
      .orderBy('id')
      .select('id', 'kind', 'channel', 'recipient', 'state', 'attempts', 'error');

  it('alerts each administrator of the notification setting by e-mail or SMS, as flagged, when a server goes down', async () => {
    const org = await organization(f.engine, { plan: 'pro' });
    const ada = await user(f.engine, org, { email: 'ada@acme.test', phone: '+15550101' });
    const bob = await user(f.engine, org, { email: 'bob@acme.test', phone: '+15550102' });
    await user(f.engine, org, { email: 'carl@acme.test', phone: '+15550103' });
    await notificationSetting(f.engine, org, {
      administrators: [
        { user_id: ada, email_enabled: true, sms_enabled: false },
        { user_id: bob, email_enabled: false, sms_enabled: true },
      ],
    });
    const server = await addServer(f.engine, org, `${farm.url}/status/500`, { title: 'Billing' });

    await f.call('/check/premium').expect(200);
    await waitFor(async () => {
      const sent = await rows({ server_id: server });
      return sent.length === 2 && sent.every((r) => r.state === 'sent');
    }, 10_000);
    expect((await rows({ server_id: server })).map((r) => [r.kind, r.channel, r.recipient])).to.deep.equal([
      ['server-down', 'email', 'ada@acme.test'],
      ['server-down', 'sms', '+15550102'],
    ]);

    expect(sink.to('ada@acme.test')).to.have.length(1);
    const mail = await sink.to('ada@acme.test')[0].parse();
    expect(mail.subject).to.equal('DOWN: Billing');
    // PUBLIC_URL's host is an IP address here: the sender names it as an address literal.
    expect(mail.from?.value[0].address).to.equal('monitor@[127.0.0.1]');
    expect(sms.requests).to.have.length(1);
    const [text] = sms.requests;
    expect(text).to.include({
      method: 'POST',
      path: SMS_PATH,
      contentType: 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from('AC0123:auth-token').toString('base64')}`,
    });
    expect(text.form).to.include({ To: '+15550102', From: '+15550000' });
    expect(text.form.Body).to.match(/^DOWN: Billing\nBilling \(http:\/\/127\.0\.0\.1:\d+\/status\/500\) is down/);
    // E-mail off for bob, SMS off for ada, carl not in the setting: nothing else went out.
    expect(sink.mails.map((m) => m.to)).to.deep.equal([['ada@acme.test']]);
  });

  it('tries a failed send again until it is delivered, keeping the alert pending with its error meanwhile', async () => {
    const org = await organization(f.engine, { plan: 'free' });
    const dora = await user(f.engine, org, { email: 'dora@acme.test', phone: '+15550104' });
    await notificationSetting(f.engine, org, {
      administrators: [{ user_id: dora, email_enabled: true, sms_enabled: true }],
    });
    refuseOnce.add('dora@acme.test');
    sms.failNext(1, 500);

    const ids = await alerts().raiseNow(org, { kind: 'test', serverId: null, subject: 'Retry me', text: 'Again.' });
    expect(ids).to.have.length(2);
    const mine = () => f.engine.knex('monitor_alerts').whereIn('id', ids).orderBy('id').select();
    await waitFor(async () => (await mine()).every((r) => Number(r.attempts) === 1), 5_000);
    const first = await mine();
    expect(first.map((r) => [r.channel, r.state])).to.deep.equal([
      ['email', 'pending'],
      ['sms', 'pending'],
    ]);
    expect(first[0].error).to.contain('451');
    expect(first[1].error).to.equal('SMS API answered 500');

    // The queue's backoff is 5 s before the second try.
    await waitFor(async () => (await mine()).every((r) => r.state === 'sent'), 20_000);
    const delivered = await mine();
    expect(delivered.map((r) => [Number(r.attempts), r.error])).to.deep.equal([
      [2, null],
      [2, null],
    ]);
    expect(delivered.every((r) => r.sent_at !== null)).to.equal(true);
    expect(sink.to('dora@acme.test')).to.have.length(1);
    expect(sms.to('+15550104').map((r) => r.status)).to.deep.equal([500, 201]);
  }).timeout(30_000);

  it('marks an alert failed after its tenth try (~42 minutes of backoff), keeping the error', async () => {
    const org = await organization(f.engine, { plan: 'free' });
    const erin = await user(f.engine, org, { email: 'erin@acme.test', phone: '+15550105' });
    await notificationSetting(f.engine, org, {
      administrators: [{ user_id: erin, email_enabled: false, sms_enabled: true }],
    });
    sms.failNext(MAX_ATTEMPTS, 503);
    // Written, not queued: the test plays the queue's tries.
    const [id] = await alerts().raise(f.engine.knex, org, {
      kind: 'test',
      serverId: null,
      subject: 'Doomed',
      text: '',
    });
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      const thrown = await alerts()
        .send(id)
        .then(
          () => null,
          (err: Error) => err,
        );
      expect(thrown?.message, `try ${attempt}`).to.equal('SMS API answered 503');
    }
    await alerts().send(id);
    const [row] = await rows({ id });
    expect(row).to.include({ channel: 'sms', recipient: '+15550105', state: 'failed', error: 'SMS API answered 503' });
    expect(Number(row.attempts)).to.equal(10);
    // Neither tried again by the queue nor taken up as stale.
    await alerts().send(id);
    clock.advance(10 * 60_000);
    expect(await alerts().requeueStale(clock.now())).to.equal(0);
    expect(sms.to('+15550105')).to.have.length(10);
  });

  it('queues again a pending alert whose job was lost, once it is two minutes old', async () => {
    const org = await organization(f.engine, { plan: 'free', admin: 'fred@acme.test' });
    // Written but never queued, as when Redis lost the job.
    const ids = await alerts().raise(f.engine.knex, org, { kind: 'test', serverId: null, subject: 'Lost', text: '' });
    expect(await alerts().requeueStale(clock.now())).to.equal(0);
    clock.advance(119_000);
    expect(await alerts().requeueStale(clock.now())).to.equal(0);
    clock.advance(2_000);
    expect(await alerts().requeueStale(clock.now())).to.equal(1);
    await waitFor(async () => (await rows({ id: ids[0] }))[0].state === 'sent', 10_000);
    expect((await sink.to('fred@acme.test')[0].parse()).subject).to.equal('Lost');
  });
  /** An organization whose one administrator is alerted by SMS, a server, and its alerts raised and tried one at a time. */
  async function outageAndRecovery(phone: string, title: string, subjects: Partial<Record<AlertKind, string>>) {
    const org = await organization(f.engine, { plan: 'free' });
    const admin = await user(f.engine, org, { email: `${title.toLowerCase()}@acme.test`, phone });
    await notificationSetting(f.engine, org, {
      administrators: [{ user_id: admin, email_enabled: false, sms_enabled: true }],
    });
    const server = await addServer(f.engine, org, `${farm.url}/status/500`, { title });
    return {
      raise: (kind: AlertKind, heartbeatId?: number) =>
        alerts()
          .raise(f.engine.knex, org, { kind, serverId: server, heartbeatId, subject: subjects[kind] ?? kind, text: '' })
          .then(([id]) => id),
      tryOnce: (id: number) =>
        alerts()
          .send(id)
          .then(
            () => null,
            (err: Error) => err.message,
          ),
      texts: () => sms.to(phone).map((r) => `${r.status} ${r.form.Body.split('\n')[0]}`),
    };
  }

  it('sends a recovery only after its outage alert: an UP raised while the DOWN is still tried waits, and lapses if the DOWN fails', async () => {
    const { raise, tryOnce, texts } = await outageAndRecovery('+15550106', 'Shop', {
      'server-down': 'DOWN: Shop',
      'server-up': 'UP: Shop',
    });

    // The relay fails the DOWN's first try; the server is back before its next one.
    sms.failNext(1, 503);
    const down = await raise('server-down');
    expect(await tryOnce(down)).to.equal('SMS API answered 503');
    const up = await raise('server-up');
    expect(up, 'the DOWN is still being tried: the outage is heard').to.be.a('number');
    expect(await tryOnce(up)).to.equal(WAITS);
    expect((await rows({ id: up }))[0]).to.include({ state: 'pending' });
    expect(Number((await rows({ id: up }))[0].attempts), 'waiting is no try').to.equal(0);
    expect(texts()).to.deep.equal(['503 DOWN: Shop']);
    expect(await tryOnce(down)).to.equal(null);
    expect(await tryOnce(up)).to.equal(null);
    expect(texts()).to.deep.equal(['503 DOWN: Shop', '201 DOWN: Shop', '201 UP: Shop']);

    // The next outage's DOWN fails every try: its UP, raised meanwhile, reaches no one.
    sms.failNext(MAX_ATTEMPTS, 503);
    const down2 = await raise('server-down');
    expect(await tryOnce(down2)).to.equal('SMS API answered 503');
    const up2 = await raise('server-up');
    for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) await tryOnce(down2);
    expect((await rows({ id: down2 }))[0].state).to.equal('failed');
    expect(await tryOnce(up2)).to.equal(null);
    expect((await rows({ id: up2 }))[0].state).to.equal('lapsed');
    expect(texts().slice(3)).to.deep.equal(Array(MAX_ATTEMPTS).fill('503 DOWN: Shop'));
  });

  it('sends a DOWN only after the UP raised before it: the last alert told is the state the server is in', async () => {
    const { raise, tryOnce, texts } = await outageAndRecovery('+15550109', 'Flap', {
      'server-down': 'DOWN: Flap',
      'server-up': 'UP: Flap',
    });
    // Down, up, down again within two minutes, while the relay fails the first DOWN's first try.
    sms.failNext(1, 503);
    const down = await raise('server-down');
    expect(await tryOnce(down)).to.equal('SMS API answered 503');
    const up = await raise('server-up');
    const down2 = await raise('server-down');
    // Their retries come in any order: each waits for the one raised before it.
    expect(await tryOnce(down2)).to.equal(WAITS);
    expect(await tryOnce(up)).to.equal(WAITS);
    expect(Number((await rows({ id: down2 }))[0].attempts), 'waiting is no try').to.equal(0);
    expect(await tryOnce(down)).to.equal(null);
    expect(await tryOnce(down2)).to.equal(WAITS);
    expect(await tryOnce(up)).to.equal(null);
    expect(await tryOnce(down2)).to.equal(null);
    expect(texts()).to.deep.equal(['503 DOWN: Flap', '201 DOWN: Flap', '201 UP: Flap', '201 DOWN: Flap']);
  });

  it("sends a heartbeat's back only after its own missing: waits while it is tried, lapses once it failed", async () => {
    const { raise, tryOnce, texts } = await outageAndRecovery('+15550107', 'Cron', {
      'heartbeat-missing': 'Heartbeat missing: Cron',
      'heartbeat-back': 'Heartbeat back: Cron',
    });
    const [nightly, hourly] = [901, 902];

    sms.failNext(1, 503);
    const missing = await raise('heartbeat-missing', nightly);
    expect(await tryOnce(missing)).to.equal('SMS API answered 503');
    const back = await raise('heartbeat-back', nightly);
    expect(await tryOnce(back)).to.equal(WAITS);
    expect(Number((await rows({ id: back }))[0].attempts), 'waiting is no try').to.equal(0);
    expect(await tryOnce(missing)).to.equal(null);
    expect(await tryOnce(back)).to.equal(null);
    expect(texts()).to.deep.equal([
      '503 Heartbeat missing: Cron',
      '201 Heartbeat missing: Cron',
      '201 Heartbeat back: Cron',
    ]);

    // Another heartbeat's "missing", still being tried, holds this one's "back" back no more.
    const nightlyMissing = await raise('heartbeat-missing', nightly);
    expect(await tryOnce(nightlyMissing)).to.equal(null);
    sms.failNext(1, 503);
    const hourlyMissing = await raise('heartbeat-missing', hourly);
    expect(await tryOnce(hourlyMissing)).to.equal('SMS API answered 503');
    const nightlyBack = await raise('heartbeat-back', nightly);
    expect(await tryOnce(nightlyBack)).to.equal(null);
    expect((await rows({ id: nightlyBack }))[0].state).to.equal('sent');

    // The hourly job's "missing" fails for good: its "back" would be the first anyone hears of it.
    const hourlyBack = await raise('heartbeat-back', hourly);
    expect(hourlyBack, 'its missing is still being tried: heard').to.be.a('number');
    sms.failNext(MAX_ATTEMPTS - 1, 503);
    for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) await tryOnce(hourlyMissing);
    expect((await rows({ id: hourlyMissing }))[0].state).to.equal('failed');
    expect(await tryOnce(hourlyBack)).to.equal(null);
    expect((await rows({ id: hourlyBack }))[0].state).to.equal('lapsed');
    expect(texts().slice(3)).to.deep.equal([
      '201 Heartbeat missing: Cron',
      '503 Heartbeat missing: Cron',
      '201 Heartbeat back: Cron',
      ...Array(MAX_ATTEMPTS - 1).fill('503 Heartbeat missing: Cron'),
    ]);
  });

  it("lets a heartbeat's back wait for a missing raised before 1.2/07 (naming the server alone), never lapsing for it", async () => {
    const { raise, tryOnce } = await outageAndRecovery('+15550108', 'Backup', {});
    sms.failNext(MAX_ATTEMPTS, 503);
    const missing = await raise('heartbeat-missing');
    expect(await tryOnce(missing)).to.equal('SMS API answered 503');
    const back = await raise('heartbeat-back', 903);
    expect(await tryOnce(back)).to.equal(WAITS);
    for (let attempt = 2; attempt <= MAX_ATTEMPTS; attempt++) await tryOnce(missing);
    expect((await rows({ id: missing }))[0].state).to.equal('failed');
    // It may have been another heartbeat's: the "back" still goes.
    expect(await tryOnce(back)).to.equal(null);
    expect((await rows({ id: back }))[0].state).to.equal('sent');
  });
});
