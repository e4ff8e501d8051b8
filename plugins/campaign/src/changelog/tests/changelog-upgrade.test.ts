import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion } from '../../shared/tests/support';

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
