import { expect } from 'chai';
import { insertedId, toDate } from '@switchboard/core';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion, campaignContainer } from '../../shared/tests/support';
import { ChangelogPublisher } from '../publisher';
import { down as dropChangelogAddresses } from '../../../migrations/1.18/01-changelog-addresses';

describeEachBackend('campaign: upgrading to 1.3 (changelog subscriptions by email alone)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('keeps the subscriptions; a rollback keeps those by email alone with an empty url, and back', async () => {
    at = await campaignAtVersion(backend(), '1.2');
    const { engine, api } = at;
    const rows = () =>
      engine.knex('changelog_subscriptions').orderBy('id').select('id', 'email', 'webhook_url', 'webhook_url_hash');
    const hooked = { email: 'dev@acme.example', webhook_url: 'https://hooks.acme.example/changelog' };
    const withUrl = (await api.post('/changelog/subscribe', hooked).expect(201)).body.data;

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.3' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.3/01-changelog-by-email-alone'] }]);
    expect((await api.post('/changelog/subscribe', hooked).expect(200)).body.data).to.deep.equal(withUrl);
    const alone = (await api.post('/changelog/subscribe', { email: 'dev@acme.example' }).expect(201)).body.data;
    expect(alone.webhook_url).to.equal(null);

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.2' });
    const rolledBack = await rows();
    expect(rolledBack.map((r) => [r.id, r.webhook_url])).to.deep.equal([
      [withUrl.id, hooked.webhook_url],
      [alone.id, ''],
    ]);

    await engine.migrator().latest({ plugin: 'campaign', to: '1.3' });
    expect(await rows()).to.deep.equal(rolledBack.map((r) => (r.id === alone.id ? { ...r, webhook_url: null } : r)));
    expect((await api.post('/changelog/subscribe', { email: 'dev@acme.example' }).expect(200)).body.data).to.deep.equal(
      alone,
    );
  });
});

describeEachBackend('campaign: upgrading to 1.11 (changelog e-mail consent)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('counts the subscriptions of 1.10 as confirmed when made, so they keep their notices; rolls back', async () => {
    at = await campaignAtVersion(backend(), '1.10');
    const { engine } = at;
    // A 1.10 database's rows, as 1.10 wrote them (it knew no consent).
    if (await engine.knex.schema.hasColumn('changelog_subscriptions', 'confirmed_at'))
      await engine.knex.schema.alterTable('changelog_subscriptions', (t) => t.dropColumn('confirmed_at'));
    const made = new Date('2026-11-01T10:00:00.000Z');
    await engine.knex('changelog_subscriptions').insert([
      {
        organization_id: at.tenant.organizationId,
        email: 'old@acme.test',
        webhook_url: null,
        webhook_url_hash: '',
        created_at: made,
      },
      {
        organization_id: at.tenant.organizationId,
        email: 'gone@acme.test',
        webhook_url: null,
        webhook_url_hash: '',
        created_at: made,
        unsubscribed_at: made,
      },
    ]);

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.11' });
    expect(applied).to.deep.equal([
      { plugin: 'campaign', applied: ['1.11/01-changelog-consent', '1.11/02-changelog-asked-at'] },
    ]);
    const rows = await engine
      .knex('changelog_subscriptions')
      .orderBy('email')
      .select('email', 'confirmed_at', 'unsubscribed_at');
    expect(
      rows.map((r: Record<string, unknown>) => [r.email, toDate(r.confirmed_at)?.getTime() === made.getTime()]),
    ).to.deep.equal([
      ['gone@acme.test', true],
      ['old@acme.test', true],
    ]);
    // Its notices go on (the unsubscribed one stays off), today's code reading them as 1.18 made them.
    await engine.migrator().latest({ plugin: 'campaign' });
    const published = await campaignContainer(engine)
      .resolve(ChangelogPublisher)
      .publish([{ title: 'Consent', body: 'Asked.' }]);
    expect(published.published[0].notices).to.equal(1);

    // One asked since 1.11 and never confirmed: 1.10 would mail it, so its rollback lets it go.
    await engine.knex('changelog_subscriptions').insert({
      organization_id: at.tenant.organizationId,
      email: 'pending@acme.test',
      webhook_url: null,
      webhook_url_hash: '',
      created_at: made,
    });
    await engine.migrator().rollback({ plugin: 'campaign', to: '1.10' });
    expect(await engine.knex.schema.hasColumn('changelog_subscriptions', 'confirmed_at')).to.equal(false);
    expect(await engine.knex.schema.hasColumn('changelog_subscriptions', 'asked_at')).to.equal(false);
    expect(await engine.knex('changelog_subscriptions').orderBy('email').pluck('email')).to.deep.equal([
      'gone@acme.test',
      'old@acme.test',
    ]);
    // The notices stay (SQLite's copy of the table, dropping a column in the rollback's transaction, deleted
    // every notice of every subscription through their foreign key until session 32).
    expect(Number((await engine.knex('changelog_notices').count({ n: '*' }))[0].n)).to.equal(1);
    // Back to 1.9, who left goes with unsubscribed_at: an upgrade again subscribes only who stayed.
    await engine.migrator().rollback({ plugin: 'campaign', to: '1.9' });
    expect(await engine.knex('changelog_subscriptions').pluck('email')).to.deep.equal(['old@acme.test']);
    await engine.migrator().latest({ plugin: 'campaign' });
    expect(await engine.knex('changelog_subscriptions').pluck('email')).to.deep.equal(['old@acme.test']);
  });
});

describeEachBackend('campaign: upgrading to 1.18 (changelog consent by address)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it("gives each address the latest of its subscriptions' answers, one mail an entry; rolls back", async () => {
    at = await campaignAtVersion(backend(), '1.17');
    const { engine } = at;
    // A 1.17 database: consent on each subscription, no addresses.
    await dropChangelogAddresses(engine.knex);
    const t = (minute: number) => new Date(Date.UTC(2026, 10, 1, 10, minute));
    const subscription = (email: string, url: string | null, state: Record<string, Date | null>) => ({
      organization_id: at!.tenant.organizationId,
      email,
      webhook_url: url,
      webhook_url_hash: url ?? '',
      created_at: t(0),
      confirmed_at: null,
      unsubscribed_at: null,
      asked_at: t(0),
      ...state,
    });
    await engine.knex('changelog_subscriptions').insert([
      // Unsubscribed through one subscription's link after confirming: the address stays off.
      subscription('kim@acme.test', null, { confirmed_at: t(1) }),
      subscription('Kim@acme.test', 'http://127.0.0.1:9/kim', { confirmed_at: t(1), unsubscribed_at: t(2) }),
      // Confirmed again after an unsubscribe: the address is on.
      subscription('lee@acme.test', 'http://127.0.0.1:9/lee', { confirmed_at: t(1), unsubscribed_at: t(2) }),
      subscription('lee@acme.test', null, { confirmed_at: t(3), asked_at: t(3) }),
      // Never confirmed.
      subscription('wait@acme.test', null, { asked_at: t(4) }),
    ]);
    // An entry 1.17 published, its notices pending: a mail for each of Lee's subscriptions, a POST to the url.
    const entry = insertedId(
      await engine
        .knex('changelog_entries')
        .insert({ entry_key: 'old', title: 'Old', body: 'Pending.', published_at: t(5) }),
    );
    const lees = await engine
      .knex('changelog_subscriptions')
      .where({ email: 'lee@acme.test' })
      .orderBy('id')
      .pluck('id');
    const notice = (subscription_id: number, channel: string) => ({
      entry_id: entry,
      subscription_id,
      channel,
      state: 'pending',
      attempts: 0,
      next_attempt_at: t(5),
    });
    await engine
      .knex('changelog_notices')
      .insert([notice(lees[0], 'email'), notice(lees[1], 'email'), notice(lees[0], 'webhook')]);

    const applied = await engine.migrator().latest({ plugin: 'campaign' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.18/01-changelog-addresses'] }]);
    const addresses = async () =>
      (
        await engine
          .knex('changelog_subscriptions as s')
          .join('changelog_addresses as a', 'a.id', 's.address_id')
          .orderBy('s.id')
          .select('s.email', 'a.id', 'a.confirmed_at', 'a.unsubscribed_at', 'a.asked_at')
      ).map((r: Record<string, unknown>) => [
        r.email,
        Number(r.id),
        ...['confirmed_at', 'unsubscribed_at', 'asked_at'].map((c) => toDate(r[c])?.getUTCMinutes() ?? null),
      ]);
    const upgraded = await addresses();
    const [kim, , lee, , wait] = upgraded.map((a) => a[1]);
    expect(upgraded).to.deep.equal([
      ['kim@acme.test', kim, 1, 2, 0],
      ['Kim@acme.test', kim, 1, 2, 0],
      ['lee@acme.test', lee, 3, null, 3],
      ['lee@acme.test', lee, 3, null, 3],
      ['wait@acme.test', wait, null, null, 4],
    ]);
    expect(new Set([kim, lee, wait]).size).to.equal(3);
    // Lee's pending mails of the old entry are one now (each subscription's mailed it until 1.18).
    expect(
      await engine
        .knex('changelog_notices')
        .where({ entry_id: entry })
        .orderBy('id')
        .select('subscription_id', 'channel', 'state'),
    ).to.deep.equal([
      { subscription_id: lees[0], channel: 'email', state: 'pending' },
      { subscription_id: lees[1], channel: 'email', state: 'dropped' },
      { subscription_id: lees[0], channel: 'webhook', state: 'pending' },
    ]);

    // Lee: one mail (not one per subscription) and the url's POST; Kim and the one waiting: nothing.
    const published = await campaignContainer(engine)
      .resolve(ChangelogPublisher)
      .publish([{ title: 'Addresses', body: 'One consent.' }]);
    expect(published.published[0].notices).to.equal(2);

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.17' });
    expect(await engine.knex.schema.hasTable('changelog_addresses')).to.equal(false);
    expect(await engine.knex.schema.hasColumn('changelog_subscriptions', 'address_id')).to.equal(false);
    const rolledBack = (
      await engine
        .knex('changelog_subscriptions')
        .orderBy('id')
        .select('email', 'confirmed_at', 'unsubscribed_at', 'asked_at')
    ).map((r: Record<string, unknown>) => [
      r.email,
      ...['confirmed_at', 'unsubscribed_at', 'asked_at'].map((c) => toDate(r[c])?.getUTCMinutes() ?? null),
    ]);
    expect(rolledBack).to.deep.equal(upgraded.map(([email, , ...state]) => [email, ...state]));
    // The notices stay.
    expect(Number((await engine.knex('changelog_notices').count({ n: '*' }))[0].n)).to.equal(5);

    await engine.migrator().latest({ plugin: 'campaign' });
    expect((await addresses()).map(([email, , ...state]) => [email, ...state])).to.deep.equal(
      upgraded.map(([email, , ...state]) => [email, ...state]),
    );

    // A rollback killed after the column went (each step commits on its own) runs again to its end.
    await engine.knex.schema.alterTable('changelog_subscriptions', (t) =>
      t.dropIndex(['address_id'], 'changelog_subscriptions_address_idx'),
    );
    await engine.knex.raw('alter table changelog_subscriptions drop column address_id');
    await engine.migrator().rollback({ plugin: 'campaign', to: '1.17' });
    expect(await engine.knex.schema.hasTable('changelog_addresses')).to.equal(false);
  });
});
