import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../shared/tests/support';

describeEachBackend('campaign: changelog subscription', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend());
  });
  after(() => f.close());

  it('stores a subscription once per organization, email and url', async () => {
    const first = await f
      .api()
      .post('/changelog/subscribe', { email: 'dev@Acme.example', webhook_url: 'https://hooks.acme.example/changelog' })
      .expect(201);
    expect(first.body.data).to.include({
      email: 'dev@acme.example',
      webhook_url: 'https://hooks.acme.example/changelog',
    });
    const again = await f
      .api()
      .post('/changelog/subscribe', { email: 'dev@acme.example', webhook_url: 'https://hooks.acme.example/changelog' })
      .expect(200);
    expect(again.body.data.id).to.equal(first.body.data.id);
  });

  it('validates the email and the url', async () => {
    const email = await f
      .api()
      .post('/changelog/subscribe', { email: 'nope', webhook_url: 'https://x.example' })
      .expect(422);
    expect(email.body.error.details).to.deep.equal({ field: 'email', rule: 'format' });
    const url = await f
      .api()
      .post('/changelog/subscribe', { email: 'a@b.example', webhook_url: 'ftp://x.example/file' })
      .expect(422);
    expect(url.body.error.details.field).to.equal('webhook_url');
    const missing = await f.api().post('/changelog/subscribe', { webhook_url: 'https://x.example' }).expect(422);
    expect(missing.body.error.details).to.deep.equal({ field: 'email', rule: 'required' });
  });

  it('subscribes an email alone, once, apart from the same email with a url', async () => {
    const first = await f.api().post('/changelog/subscribe', { email: 'solo@Acme.example' }).expect(201);
    expect(first.body.data).to.include({ email: 'solo@acme.example', webhook_url: null });
    const again = await f.api().post('/changelog/subscribe', { email: 'solo@acme.example' }).expect(200);
    expect(again.body.data).to.deep.equal(first.body.data);

    const withUrl = await f
      .api()
      .post('/changelog/subscribe', { email: 'solo@acme.example', webhook_url: 'https://hooks.acme.example/solo' })
      .expect(201);
    expect(withUrl.body.data.id).not.to.equal(first.body.data.id);
    expect(withUrl.body.data.webhook_url).to.equal('https://hooks.acme.example/solo');
  });
});
