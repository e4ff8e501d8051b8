import { expect } from 'chai';
import { describeEachBackend, createTenant } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../../shared/tests/support';

describeEachBackend('campaign: sender profiles', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend());
  });
  after(() => f.close());

  it('keeps one default per organization', async () => {
    const first = (
      await f
        .api()
        .post('/sender-profiles', {
          name: 'News',
          from_name: 'Acme',
          from_email: 'news@acme.example',
          is_default: true,
        })
        .expect(201)
    ).body.data;
    expect(first).to.include({ is_default: true, reply_to_email: null });
    const second = (
      await f
        .api()
        .post('/sender-profiles', {
          name: 'Support',
          from_name: 'Acme Support',
          from_email: 'help@acme.example',
          reply_to_email: 'desk@acme.example',
          is_default: true,
        })
        .expect(201)
    ).body.data;
    const all = (await f.api().get('/sender-profiles').expect(200)).body.data;
    expect(all.filter((p: { is_default: boolean }) => p.is_default).map((p: { id: number }) => p.id)).to.deep.equal([
      second.id,
    ]);
    await f.api().put(`/sender-profiles/${first.id}`, { is_default: true }).expect(200);
    expect((await f.api().get(`/sender-profiles/${second.id}`)).body.data.is_default).to.equal(false);
    const other = await createTenant(f.engine, { name: 'Other' });
    await f
      .api(other)
      .post('/sender-profiles', { name: 'X', from_name: 'X', from_email: 'x@other.example', is_default: true })
      .expect(201);
    expect((await f.api().get(`/sender-profiles/${first.id}`)).body.data.is_default).to.equal(true);
    await f.api(other).get(`/sender-profiles/${first.id}`).expect(404);
  });

  it('validates the from address and deletes', async () => {
    const bad = await f
      .api()
      .post('/sender-profiles', { name: 'Bad', from_name: 'Bad', from_email: 'not-an-address' })
      .expect(422);
    expect(bad.body.error.details).to.deep.equal({ field: 'from_email', rule: 'format' });
    const id = (
      await f
        .api()
        .post('/sender-profiles', { name: 'Tmp', from_name: 'Tmp', from_email: ' tmp@acme.example ' })
        .expect(201)
    ).body.data.id;
    expect((await f.api().delete(`/sender-profiles/${id}`).expect(200)).body.message).to.equal(
      `Sender profile ${id} deleted`,
    );
    await f.api().get(`/sender-profiles/${id}`).expect(404);
  });
});
