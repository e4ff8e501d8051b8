import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from './support';

describeEachBackend('campaign: word* prefixes ending in any character', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend());
    for (const s of [
      { email: 'andre@example.com', first_name: 'André', last_name: 'Straße' },
      { email: 'zoe@example.com', first_name: 'Zoë', last_name: 'Lizard' },
      { email: 'user9x@example.com', first_name: 'Nine' },
    ]) {
      await f.api().post('/subscribers', s).expect(201);
    }
  });
  after(() => f.close());

  const firstNames = async (text: string) =>
    (
      await f
        .api()
        .get(`/subscribers?search=${encodeURIComponent(text)}`)
        .expect(200)
    ).body.data.map((s: { first_name: string }) => s.first_name);

  it('finds a prefix ending in an accented letter, ß, z or a digit on every database', async () => {
    expect(await firstNames('name:andré*')).to.deep.equal(['André']);
    expect(await firstNames('andré*')).to.deep.equal(['André']);
    expect(await firstNames('name:straß*')).to.deep.equal(['André']);
    expect(await firstNames('name:liz*')).to.deep.equal(['Zoë']);
    expect(await firstNames('name:zoë*')).to.deep.equal(['Zoë']);
    expect(await firstNames('user9*')).to.deep.equal(['Nine']);
  });
});
