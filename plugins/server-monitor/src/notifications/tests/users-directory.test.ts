import { expect } from 'chai';
import { Engine, listTables } from '@switchboard/core';
import { describeEachBackend } from '@switchboard/core/testing';
import { NotificationSettingService } from '../setting-service';
import { newOrganization, StubDirectory, stubbedDirectoryEngine } from '../../shared/tests/users-directory-stub';

describeEachBackend('server-monitor: the notification setting reads the injected users directory', (backend) => {
  const directory = new StubDirectory();
  let engine: Engine;
  before(async () => {
    engine = await stubbedDirectoryEngine(backend(), directory);
  });
  after(async () => {
    await engine?.close();
  });

  it('checks and shows the administrators through the directory, with no users table', async () => {
    expect(await listTables(engine.knex)).to.not.include('users');
    const org = await newOrganization(engine);
    const elsewhere = await newOrganization(engine);
    directory.add(org, 911, 'admin', 'dora@stub.test', '+15550911');
    directory.add(org, 912, 'member', 'eve@stub.test');
    directory.add(elsewhere, 913, 'admin', 'fay@stub.test');
    const settings = engine.contexts.get('server-monitor')!.container.resolve(NotificationSettingService);
    const refusal = (user_id: number, sms_enabled = false) =>
      settings.update(org, { administrators: [{ user_id, email_enabled: true, sms_enabled }] }).then(
        () => '',
        (err: Error) => err.message,
      );
    expect(await refusal(912)).to.equal(
      'user 912 is not an administrator (role member): alerts go to users of role admin',
    );
    expect(await refusal(913)).to.equal(`user 913 not found in organization ${org}`);

    // No setting yet: every administrator by e-mail.
    expect((await settings.read(org)).administrators).to.deep.equal([
      {
        user_id: 911,
        email_enabled: true,
        sms_enabled: false,
        email: 'dora@stub.test',
        phone: '+15550911',
        alerted: true,
      },
    ]);
    const setting = await settings.update(org, {
      administrators: [{ user_id: 911, email_enabled: false, sms_enabled: true }],
    });
    expect(setting).to.deep.include({ every_admin_by_email: false });
    expect(setting.administrators).to.deep.equal([
      {
        user_id: 911,
        email_enabled: false,
        sms_enabled: true,
        email: 'dora@stub.test',
        phone: '+15550911',
        alerted: true,
      },
    ]);
  });
});
