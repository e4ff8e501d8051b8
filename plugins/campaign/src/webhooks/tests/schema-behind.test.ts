import { expect } from 'chai';
import { describeEachBackend, waitFor } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { WebhookDispatcher } from '../dispatcher';
import { receiver } from '../../shared/tests/webhook-receiver';

describeEachBackend('campaign: outbound webhooks on a schema rolled back under the worker', (backend) => {
  let f: CampaignFixture;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  before(async () => {
    hooks = await receiver();
    // No workers: the test runs the dispatcher itself.
    f = await campaignFixture(backend());
  });
  after(async () => {
    await f?.close();
    await hooks?.close();
  });
  const dispatcher = () => campaignContainer(f.engine).resolve(WebhookDispatcher);

  it('delivers nothing and lets its lock go while the schema is behind; delivers once it is migrated', async () => {
    await f
      .api()
      .post('/webhooks', { name: 'CRM', url: hooks.url('/crm'), events: ['subscriber.created'] })
      .expect(201);
    await f.api().post('/subscribers', { email: 'new@behind.test' }).expect(201);
    await f.engine.migrator().rollback({ plugin: 'campaign', to: '1.15' });
    await waitFor(async () => !(await f.engine.schemaGate.isOpen()), 15_000);

    // A run takes nothing and ends (it used to wait holding the one delivery lock): the next run gets the lock.
    expect(await dispatcher().run()).to.equal(0);
    expect(await dispatcher().run(), 'the lock was let go').to.equal(0);
    expect(hooks.at('/crm')).to.have.length(0);

    await f.engine.migrator().latest();
    await waitFor(() => f.engine.schemaGate.isOpen(), 15_000);
    expect(await dispatcher().run()).to.equal(1);
    expect(hooks.at('/crm')).to.have.length(1);
    expect(JSON.parse(hooks.at('/crm')[0].body)).to.deep.include({ event: 'subscriber.created' });
  }).timeout(60_000);
});
