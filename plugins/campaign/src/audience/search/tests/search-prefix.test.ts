import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../../shared/tests/support';

describeEachBackend('campaign: word* prefixes ending in any character', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend());
    for (const s of [
      { email: 'andre@example.com', first_name: 'André', last_name: 'Straße' },
      { email: 'zoe@example.com', first_name: 'Zoë', last_name: 'Lizard' },
      { email: 'user9x@example.com', first_name: 'Nine' },
      { email: 'j.mueller@muenchen.example', first_name: 'Jürgen', last_name: 'Müller' },
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

  it('folds accents and case like substrings, and matches only where a word starts', async () => {
    expect(await firstNames('name:mull*')).to.deep.equal(['Jürgen']);
    expect(await firstNames('name:MÜLL*')).to.deep.equal(['Jürgen']);
    expect(await firstNames('name:zoe*')).to.deep.equal(['Zoë']);
    // Email words: the local part, its pieces, the domain.
    expect(await firstNames('mueller*')).to.deep.equal(['Jürgen']);
    expect(await firstNames('muench*')).to.deep.equal(['Jürgen']);
    expect(await firstNames('j.mue*')).to.deep.equal(['Jürgen']);
    // Inside a word is a substring, not a prefix.
    expect(await firstNames('name:ller*')).to.deep.equal([]);
    expect(await firstNames('9x*')).to.deep.equal([]);
    expect(await firstNames('com*'), 'the domain is one word').to.deep.equal([]);
    expect(await firstNames('ller')).to.deep.equal(['Jürgen']);
  });
});
