import { expect } from 'chai';
import { Engine, listTables } from '@switchboard/core';
import { createTestEngine, describeEachBackend } from '@switchboard/core/testing';
import { USERS_DIRECTORY as PROVIDED_BY_USERS_PROJECTS } from '@switchboard/plugin-users-projects';
import monitor from '../../index';
import { AlertService } from '../alert-service';
import { DirectoryReader, USERS_DIRECTORY } from '../../shared/users-directory';
import { newOrganization, StubDirectory, stubbedDirectoryEngine } from '../../shared/tests/users-directory-stub';

describeEachBackend('server-monitor: alert recipients come from the injected users directory', (backend) => {
  const directory = new StubDirectory();
  let engine: Engine;
  before(async () => {
    engine = await stubbedDirectoryEngine(backend(), directory);
  });
  after(async () => {
    await engine?.close();
  });

  const alerts = () => engine.contexts.get('server-monitor')!.container.resolve(AlertService);
  const recipients = (ids: number[]) =>
    engine.knex('monitor_alerts').whereIn('id', ids).orderBy('id').select('channel', 'recipient');

  it("needs the service users-projects provides, under the same name, and is ordered after the directory's provider", () => {
    expect(USERS_DIRECTORY.name).to.equal(PROVIDED_BY_USERS_PROJECTS.name);
    expect(monitor.needs).to.deep.equal([USERS_DIRECTORY]);
    expect(engine.plugins.map((l) => l.plugin.id)).to.deep.equal(['stub-directory', 'server-monitor']);
  });

  it("alerts the administrators the directory gives, read in the alert's transaction, with no users table", async () => {
    expect(await listTables(engine.knex)).to.not.include('users');
    const org = await newOrganization(engine);
    directory.add(org, 901, 'admin', 'ada@stub.test', '+15550901');
    directory.add(org, 902, 'admin', 'bob@stub.test');
    directory.add(org, 903, 'member', 'carl@stub.test', '+15550903');
    const raiseInTransaction = async () => {
      directory.reads.length = 0;
      let transaction: DirectoryReader | undefined;
      const ids = await engine.knex.transaction((trx) => {
        transaction = trx;
        return alerts().raise(trx, org, { kind: 'test', serverId: null, subject: 'Stubbed', text: '' });
      });
      expect(directory.reads).to.not.be.empty;
      for (const read of directory.reads) expect(read.db, read.method).to.equal(transaction);
      return recipients(ids);
    };

    // No setting: every administrator by e-mail.
    expect(await raiseInTransaction()).to.deep.equal([
      { channel: 'email', recipient: 'ada@stub.test' },
      { channel: 'email', recipient: 'bob@stub.test' },
    ]);
    expect(directory.reads.map((r) => r.method)).to.deep.equal(['administrators', 'usersOf']);

    const now = new Date();
    await engine.knex('monitor_notification_settings').insert({
      organization_id: org,
      administrators: JSON.stringify([
        { user_id: 901, email_enabled: false, sms_enabled: true },
        { user_id: 902, email_enabled: true, sms_enabled: false },
        // Not a user of this organization in the directory: left out.
        { user_id: 999, email_enabled: true, sms_enabled: false },
      ]),
      created_at: now,
      updated_at: now,
    });
    expect(await raiseInTransaction()).to.deep.equal([
      { channel: 'sms', recipient: '+15550901' },
      { channel: 'email', recipient: 'bob@stub.test' },
    ]);
    expect(directory.reads.map((r) => r.method)).to.deep.equal(['usersOf']);
  });

  it('does not start without a plugin providing the directory, naming users-projects', async () => {
    const error = await createTestEngine(backend(), { plugins: [monitor], migrate: false }).then(
      async (other) => {
        await other.close();
        return '';
      },
      (err: Error) => err.message,
    );
    expect(error).to.equal(
      'Plugin "server-monitor" needs the service "users.directory", which no enabled plugin provides: enable "users-projects", which provides it (PLUGINS / config/switchboard.json).',
    );
  });
});
