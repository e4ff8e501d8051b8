import { expect } from 'chai';
import { alterTableOnce, dropColumnsOnce, type Engine, hashToken, SecretBox, SERVICES } from '@switchboard/core';
import { createTestEngine, describeEachBackend } from '@switchboard/core/testing';
import usersProjects from '@switchboard/plugin-users-projects';
import monitor from '../../index';
import { openEndpoint } from '../endpoints';
import { SERVER_COLUMNS } from '../../../migrations/1.1/01-checks';

const monitorMigrations = async (engine: Engine) =>
  (await engine.migrator().status()).find((s) => s.plugin === 'server-monitor');

describeEachBackend('server-monitor: upgrading 1.0 -> 1.1 -> 1.2', (backend) => {
  let engine: Engine | undefined;
  after(async () => engine?.close());

  it('keeps every row of a 1.0 database, turns its notification settings into administrators, seals endpoint passwords, and rolls back', async () => {
    engine = await createTestEngine(backend(), { plugins: [usersProjects, monitor], migrate: false });
    const knex = engine.knex;
    await engine.migrator().latest();
    await engine.migrator().rollback({ plugin: 'server-monitor', to: '1.0' });
    expect(await knex.schema.hasTable('monitor_check_results')).to.equal(false);

    // A 1.0 database with data.
    const now = new Date('2026-01-02T03:04:05Z');
    const [org] = await knex('organizations').insert({
      name: 'Old Co',
      selected_plan: 'basic',
      subscription_status: 'active',
      created_at: now,
      updated_at: now,
    });
    const user = (email: string, role: string, phone: string | null = null) =>
      knex('users').insert({ organization_id: org, name: email, email, role, phone, created_at: now, updated_at: now });
    const [ada] = await user('ada@old.test', 'admin', '+15550001');
    const [bob] = await user('bob@old.test', 'admin');
    await user('carl@old.test', 'member');
    const [server] = await knex('monitor_servers').insert({
      organization_id: org,
      title: 'Web',
      endpoint: 'https://old.test/',
      status: '200',
      notes: 'imported',
      created_at: now,
      updated_at: now,
    });
    // A password in an endpoint: 1.2 seals it, its rollback puts it back.
    const withPassword = 'https://ops:s3cret%21@old.test:8443/health';
    const [guarded] = await knex('monitor_servers').insert({
      organization_id: org,
      title: 'Guarded',
      endpoint: withPassword,
      status: '200',
      created_at: now,
      updated_at: now,
    });
    // A token in an endpoint's query (with a password, and alone): 1.2 seals it too, its rollback puts it back.
    const withToken = 'https://ops:s3cret%21@old.test/health?token=t0ken-1&x=1';
    const tokenOnly = 'https://old.test/ping?api_key=k3y-2';
    const [tokened, keyed] = await Promise.all(
      [withToken, tokenOnly].map(async (endpoint, k) => {
        const [id] = await knex('monitor_servers').insert({
          organization_id: org,
          title: `Tokened ${k}`,
          endpoint,
          created_at: now,
          updated_at: now,
        });
        return id;
      }),
    );
    // A check note of 1.0 with the token in it: 1.2 masks it there too.
    await knex('monitor_logs').insert({
      server_id: tokened,
      original_status: '200',
      updated_status: '500',
      note: `${withToken} failed (answered 500)`,
      created_at: now,
    });
    // One cut at the note's size in the middle of the URL, as a long endpoint's notes are.
    await knex('monitor_logs').insert({
      server_id: tokened,
      original_status: '500',
      updated_status: '200',
      note: withToken.slice(0, withToken.indexOf('&x=')),
      created_at: now,
    });
    await knex('monitor_logs').insert({
      server_id: server,
      original_status: '200',
      updated_status: '500',
      note: 'it broke',
      created_at: now,
    });
    await knex('monitor_notification_settings').insert({
      organization_id: org,
      emails: JSON.stringify(['ADA@old.test', 'carl@old.test', 'pager@elsewhere.test']),
      sms_enabled: true,
      created_at: now,
      updated_at: now,
    });

    expect(await engine.migrator().latest({ plugin: 'server-monitor', to: '1.1' })).to.deep.equal([
      { plugin: 'server-monitor', applied: ['1.1/01-checks'] },
    ]);
    const upgraded = await knex('monitor_servers').where({ id: server }).first();
    expect(upgraded).to.include({ title: 'Web', status: '200', notes: 'imported' });
    expect(Boolean(upgraded.uptime_stale)).to.equal(true);
    expect(await knex('monitor_logs').where({ server_id: server }).first()).to.include({ note: 'it broke' });
    const at11 = await knex('monitor_notification_settings').where({ organization_id: org }).first();
    expect(JSON.parse(at11.emails)).to.have.length(3);
    expect(Number(at11.ssl_expiry_days)).to.equal(14);

    // A heartbeat of 1.1, its token kept as it was handed out.
    const oldToken = 'b2xkLXBpbmctdG9rZW4tb2YtMS4xLWFi';
    const [beat] = await knex('monitor_heartbeats').insert({
      server_id: server,
      token: oldToken,
      interval_seconds: 300,
      grace_seconds: 60,
      due_at: now,
      state: 'new',
      created_at: now,
      updated_at: now,
    });

    // Its alert, still being tried: 1.2/07 keeps it, naming no heartbeat; its rollback keeps it too.
    const [missing] = await knex('monitor_alerts').insert({
      organization_id: org,
      server_id: server,
      kind: 'heartbeat-missing',
      channel: 'email',
      recipient: 'ada@old.test',
      subject: 'Heartbeat missing: Web',
      body: 'The heartbeat of Web expects a ping every 300 s; the last one came never.',
      state: 'pending',
      created_at: now,
    });

    // Its last check failed (1.1 keeps is_up): 1.2 shows it down.
    await knex('monitor_servers').where({ id: server }).update({ is_up: false });
    await engine.migrator().latest({ plugin: 'server-monitor', to: '1.2' });
    expect(await knex('monitor_servers').where({ id: server }).first()).to.include({ state: 'down', paused_at: null });
    const at12 = await knex('monitor_notification_settings').where({ organization_id: org }).first();
    expect(at12).to.not.have.property('emails');
    expect(JSON.parse(at12.administrators)).to.deep.equal([
      { user_id: Number(ada), email_enabled: true, sms_enabled: true },
      { user_id: Number(bob), email_enabled: false, sms_enabled: true },
    ]);
    // Listed addresses that are no administrator's are kept, and still alerted.
    expect(JSON.parse(at12.other_emails)).to.deep.equal(['carl@old.test', 'pager@elsewhere.test']);
    expect(await knex.schema.hasTable('monitor_dispatches')).to.equal(true);
    expect((await monitorMigrations(engine))?.current).to.equal('1.2');
    const sealed = await knex('monitor_servers').where({ id: guarded }).first();
    expect(sealed.endpoint).to.equal('https://ops:***@old.test:8443/health');
    expect(JSON.stringify(sealed)).to.not.contain('s3cret');
    expect(openEndpoint(sealed, engine.container.resolve<SecretBox>(SERVICES.SecretBox))).to.equal(withPassword);
    expect(await knex('monitor_servers').where({ id: server }).first()).to.include({
      endpoint: 'https://old.test/',
      endpoint_secret: null,
    });
    const box = engine.container.resolve<SecretBox>(SERVICES.SecretBox);
    const tokenRow = await knex('monitor_servers').where({ id: tokened }).first();
    const keyRow = await knex('monitor_servers').where({ id: keyed }).first();
    expect([tokenRow.endpoint, keyRow.endpoint]).to.deep.equal([
      'https://ops:***@old.test/health?token=***&x=1',
      'https://old.test/ping?api_key=***',
    ]);
    expect(JSON.stringify([tokenRow, keyRow])).to.not.match(/s3cret|t0ken|k3y/);
    expect([openEndpoint(tokenRow, box), openEndpoint(keyRow, box)]).to.deep.equal([withToken, tokenOnly]);
    expect(await knex('monitor_logs').where({ server_id: tokened }).orderBy('id').pluck('note')).to.deep.equal([
      'https://ops:***@old.test/health?token=***&x=1 failed (answered 500)',
      'https://ops:***@old.test/health?token=***',
    ]);
    // The token is kept as its digest: the ping URL handed out before still pings (a ping looks its digest up).
    expect((await knex('monitor_heartbeats').where({ id: beat }).first('token')).token).to.equal(hashToken(oldToken));
    expect(await knex('monitor_alerts').where({ id: missing }).first('kind', 'state', 'heartbeat_id')).to.deep.equal({
      kind: 'heartbeat-missing',
      state: 'pending',
      heartbeat_id: null,
    });

    await engine.migrator().rollback({ plugin: 'server-monitor', to: '1.1' });
    const back = await knex('monitor_notification_settings').where({ organization_id: org }).first();
    expect(JSON.parse(back.emails)).to.deep.equal(['ada@old.test', 'carl@old.test', 'pager@elsewhere.test']);
    expect(Boolean(back.sms_enabled)).to.equal(true);
    expect(back).to.not.have.property('administrators');
    const server11 = await knex('monitor_servers').where({ id: server }).first();
    expect(server11).to.include({ title: 'Web' }).and.not.have.property('state');
    expect(await knex('monitor_logs').where({ server_id: server }).count({ n: '*' })).to.deep.equal([{ n: 1 }]);
    expect(await knex.schema.hasTable('monitor_dispatches')).to.equal(false);
    const reopened = await knex('monitor_servers').where({ id: guarded }).first();
    expect(reopened.endpoint).to.equal(withPassword);
    expect(
      (await knex('monitor_servers').whereIn('id', [tokened, keyed]).orderBy('id').select('endpoint')).map(
        (r) => r.endpoint,
      ),
    ).to.deep.equal([withToken, tokenOnly]);
    expect(reopened).to.not.have.property('endpoint_secret');
    const alert11 = await knex('monitor_alerts').where({ id: missing }).first();
    expect(alert11).to.include({ kind: 'heartbeat-missing', state: 'pending' }).and.not.have.property('heartbeat_id');

    // 1.1's rollback killed between two of its columns (after uptime_stale, before uptime_at), then run again.
    await alterTableOnce(knex, 'monitor_servers', (t) => t.dropIndex([], 'monitor_servers_stale_idx'));
    expect(SERVER_COLUMNS[SERVER_COLUMNS.length - 1]).to.equal('uptime_at');
    await dropColumnsOnce(knex, 'monitor_servers', SERVER_COLUMNS.slice(0, -1));
    await engine.migrator().rollback({ plugin: 'server-monitor', to: '1.0' });
    expect(await knex.schema.hasTable('monitor_check_results')).to.equal(false);
    expect(await knex.schema.hasColumn('monitor_servers', 'uptime_at'), 'the column left').to.equal(false);
    expect(await knex('monitor_servers').where({ id: server }).first()).to.include({ title: 'Web', notes: 'imported' });
    expect(await knex('monitor_logs').count({ n: '*' })).to.deep.equal([{ n: 3 }]);
    expect(await knex('users').count({ n: '*' })).to.deep.equal([{ n: 3 }]);
  });
});
