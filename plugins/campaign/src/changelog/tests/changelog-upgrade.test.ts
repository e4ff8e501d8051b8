import { expect } from 'chai';
import { toDate } from '@switchboard/core';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion, campaignContainer } from '../../shared/tests/support';
import { ChangelogPublisher } from '../publisher';

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
    // Its notices go on (the unsubscribed one stays off).
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
