import { execFile } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { AlertService } from '../../alerts';
import { monitorFixture, MonitorFixture, notificationSetting, organization, user } from '../../shared/tests/support';

const BIN = path.resolve(__dirname, '../../../../../../bin/switchboard.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describeEachBackend('server-monitor: servermonitor:notifications', (backend) => {
  let f: MonitorFixture;
  before(async () => {
    f = await monitorFixture(backend());
  });
  after(async () => {
    await f?.close();
  });

  /** The command as an operator runs it: a process of its own on the fixture's database. */
  const notifications = (...args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      const env = {
        ...process.env,
        LOG_LEVEL: 'warn',
        DATABASE_URL: backend().databaseUrl,
        REDIS_PREFIX: backend().redisPrefix,
        ...(backend().redisUrl ? { REDIS_URL: backend().redisUrl } : {}),
        PLUGINS: 'users-projects,server-monitor',
        DATA_DIR: backend().dataDir,
      };
      execFile(process.execPath, [BIN, 'servermonitor:notifications', ...args], { env }, (error, stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  const json = async (...args: string[]) => {
    const run = await notifications(...args, '--json');
    expect(run.stderr).to.equal('');
    expect(run.code).to.equal(0);
    return JSON.parse(run.stdout);
  };
  const settingRow = (org: number) =>
    f.engine
      .knex('monitor_notification_settings')
      .where({ organization_id: org })
      .first('administrators', 'other_emails', 'ssl_expiry_days');

  it('sets two administrators with their channels and the SSL threshold, keeps other_emails, and alerts follow it', async function () {
    // Five CLI processes on a busy 2-core host: 7.7 s under .ci/run on a slow day.
    this.timeout(60_000);
    const org = await organization(f.engine);
    const ada = await user(f.engine, org, { email: 'ada@notify.test', phone: '+15550201' });
    const bob = await user(f.engine, org, { email: 'bob@notify.test' });
    await user(f.engine, org, { email: 'carl@notify.test', phone: '+15550203' });
    await notificationSetting(f.engine, org, { sslExpiryDays: 20 });
    await f.engine
      .knex('monitor_notification_settings')
      .where({ organization_id: org })
      .update({ other_emails: JSON.stringify(['ops@notify.test']) });

    const set = await json(`--organization=${org}`, '--admin', `${ada}:email,sms`, '--admin', `${bob}:email`);
    const expected = {
      organization_id: org,
      every_admin_by_email: false,
      administrators: [
        {
          user_id: ada,
          email_enabled: true,
          sms_enabled: true,
          email: 'ada@notify.test',
          phone: '+15550201',
          alerted: true,
        },
        { user_id: bob, email_enabled: true, sms_enabled: false, email: 'bob@notify.test', phone: null, alerted: true },
      ],
      other_emails: ['ops@notify.test'],
      ssl_expiry_days: 20,
    };
    expect(set).to.deep.equal(expected);
    expect(await json(`--organization=${org}`, '--ssl-expiry-days', '30')).to.deep.equal({
      ...expected,
      ssl_expiry_days: 30,
    });

    // The row holds the spec's shape, nothing more; other_emails and the threshold as they were set.
    const row = await settingRow(org);
    expect(row.administrators).to.equal(
      JSON.stringify([
        { user_id: ada, email_enabled: true, sms_enabled: true },
        { user_id: bob, email_enabled: true, sms_enabled: false },
      ]),
    );
    expect(row.other_emails).to.equal('["ops@notify.test"]');
    expect(Number(row.ssl_expiry_days)).to.equal(30);

    const printed = await notifications(`--organization=${org}`);
    expect(printed.code).to.equal(0);
    expect(printed.stdout.split('\n')).to.deep.equal([
      `Organization ${org}`,
      'Administrators:',
      `  user ${ada} ada@notify.test, +15550201: email, sms`,
      `  user ${bob} bob@notify.test, no phone: email`,
      'Other e-mails: ops@notify.test',
      'SSL expiry alert: 30 days before',
      '',
    ]);

    const alerts = f.engine.contexts.get('server-monitor')!.container.resolve(AlertService);
    const ids = await alerts.raise(f.engine.knex, org, { kind: 'test', serverId: null, subject: 'Hi', text: '' });
    const written = await f.engine
      .knex('monitor_alerts')
      .whereIn('id', ids)
      .orderBy('id')
      .select('channel', 'recipient');
    // carl is an administrator too, but no longer in the list.
    expect(written.map((r) => [r.channel, r.recipient])).to.deep.equal([
      ['email', 'ada@notify.test'],
      ['sms', '+15550201'],
      ['email', 'bob@notify.test'],
      ['email', 'ops@notify.test'],
    ]);

    // Bob demoted to member since: listed still, said not to be alerted, and not alerted.
    await f.engine.knex('users').where({ id: bob }).update({ role: 'member' });
    const after = await notifications(`--organization=${org}`);
    expect(after.stdout).to.contain(
      `  user ${bob} bob@notify.test, no phone: email (not alerted: no administrator now)`,
    );
    const later = await alerts.raise(f.engine.knex, org, { kind: 'test', serverId: null, subject: 'Hi', text: '' });
    const recipients = await f.engine.knex('monitor_alerts').whereIn('id', later).orderBy('id').pluck('recipient');
    expect(recipients).to.deep.equal(['ada@notify.test', '+15550201', 'ops@notify.test']);
  });

  it('prints the default for an organization without a setting, and a threshold alone leaves it the default', async function () {
    // Several processes or every route on a busy 2-core host: ~10 s under .ci/run on a slow day.
    this.timeout(60_000);
    const org = await organization(f.engine, { admin: 'dora@notify.test' });
    const [dora] = await f.engine.knex('users').where({ organization_id: org }).pluck('id');
    await user(f.engine, org, { email: 'eve@notify.test', role: 'member' });

    const printed = await notifications(`--organization=${org}`);
    expect(printed.code).to.equal(0);
    expect(printed.stdout.split('\n')).to.deep.equal([
      `Organization ${org}`,
      'Administrators: not set, so every administrator (role admin) is alerted by e-mail (the default)',
      `  user ${dora} dora@notify.test, no phone: email`,
      'Other e-mails: none',
      'SSL expiry alert: 14 days before',
      '',
    ]);
    const theDefault = {
      organization_id: org,
      every_admin_by_email: true,
      administrators: [
        {
          user_id: Number(dora),
          email_enabled: true,
          sms_enabled: false,
          email: 'dora@notify.test',
          phone: null,
          alerted: true,
        },
      ],
      other_emails: [],
      ssl_expiry_days: 14,
    };
    expect(await json(`--organization=${org}`)).to.deep.equal(theDefault);
    expect(await settingRow(org), 'reading writes nothing').to.equal(undefined);

    expect(await json(`--organization=${org}`, '--ssl-expiry-days=7')).to.deep.equal({
      ...theDefault,
      ssl_expiry_days: 7,
    });
    const row = await settingRow(org);
    expect([row.administrators, row.other_emails, Number(row.ssl_expiry_days)]).to.deep.equal([null, null, 7]);
  });

  describe('refusals (exit 1, the setting unchanged)', () => {
    let org: number;
    let ada: number;
    let bob: number;
    let member: number;
    let foreign: number;
    const noAdministrators = '[]';
    before(async () => {
      org = await organization(f.engine);
      ada = await user(f.engine, org, { email: 'ada@refuse.test', phone: '+15550301' });
      bob = await user(f.engine, org, { email: 'bob@refuse.test' });
      member = await user(f.engine, org, { email: 'mel@refuse.test', phone: '+15550302', role: 'member' });
      foreign = await user(f.engine, await organization(f.engine), { email: 'fox@refuse.test' });
      await notificationSetting(f.engine, org, { administrators: [], sslExpiryDays: 10 });
    });
    afterEach(async () => {
      const row = await settingRow(org);
      expect([row.administrators, Number(row.ssl_expiry_days)]).to.deep.equal([noAdministrators, 10]);
    });

    const cases: Array<[string, () => string[], () => string]> = [
      [
        'an unknown organization',
        () => ['--organization=999999', '--admin', `${ada}:email`],
        () => 'Organization with ID 999999 not found',
      ],
      [
        'an organization id that is no id',
        () => ['--organization=acme'],
        () => '--organization must be an organization id',
      ],
      [
        'a user of another organization',
        () => ['--admin', `${ada}:email`, '--admin', `${foreign}:email`],
        () => `user ${foreign} not found in organization ${org}`,
      ],
      [
        'a user that does not exist',
        () => ['--admin', '999999:email'],
        () => `user 999999 not found in organization ${org}`,
      ],
      [
        'a user who is no administrator',
        () => ['--admin', `${member}:email`],
        () => `user ${member} is not an administrator (role member): alerts go to users of role admin`,
      ],
      [
        'SMS for a user without a phone',
        () => ['--admin', `${bob}:email,sms`],
        () => `user ${bob} has no phone number for SMS`,
      ],
      [
        'an unknown channel',
        () => ['--admin', `${ada}:fax`],
        () => `--admin must be USER_ID:CHANNELS with CHANNELS email, sms, email,sms or none (got "${ada}:fax")`,
      ],
      [
        'a user given twice',
        () => ['--admin', `${ada}:email`, '--admin', `${ada}:sms`],
        () => `--admin names user ${ada} twice`,
      ],
      ...['0', '366', '1.5', 'ten'].map((days): [string, () => string[], () => string] => [
        `--ssl-expiry-days ${days}`,
        () => ['--ssl-expiry-days', days, '--admin', `${ada}:email`],
        () => '--ssl-expiry-days must be a whole number from 1 to 365',
      ]),
    ];
    for (const [what, args, message] of cases)
      it(`refuses ${what}`, async () => {
        const given = args();
        const run = await notifications(
          ...(given[0].startsWith('--organization') ? given : [`--organization=${org}`, ...given]),
        );
        expect([run.code, run.stderr, run.stdout]).to.deep.equal([1, `Error: ${message()}\n`, '']);
      });

    it('says why in one JSON object with --json', async () => {
      const run = await notifications(`--organization=${org}`, '--admin', `${bob}:sms`, '--json');
      expect([run.code, JSON.parse(run.stderr)]).to.deep.equal([
        1,
        { error: `user ${bob} has no phone number for SMS` },
      ]);
    });
  });
});
