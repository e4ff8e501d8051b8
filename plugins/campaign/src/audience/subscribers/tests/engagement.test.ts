import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../../shared/tests/support';
import { engage, Engagement } from '../engagement';

describeEachBackend('campaign: subscriber engagement rows', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend());
  });
  after(async () => f?.close());

  const row = async (id: number) =>
    f.engine
      .knex('subscriber_engagement')
      .where({ subscriber_id: id })
      .first('messages_opened', 'messages_clicked', 'last_engaged_day');
  const run = (day: string, engaged: Array<[number, Engagement]>) =>
    f.engine.knex.transaction((trx) => engage(trx, day, new Map(engaged)));

  it('writes a first engagement, adds to a stored one by each amount, and never moves a day back', async () => {
    const emails = ['new@engaged.test', 'older@engaged.test', 'later@engaged.test'];
    await f
      .api()
      .post('/subscribers/batch', { subscribers: emails.map((email) => ({ email })), skip_confirmation: true })
      .expect(200);
    const [fresh, older, later] = (
      await f.engine.knex('subscribers').where({ organization_id: f.tenant.organizationId }).orderBy('id').pluck('id')
    ).map(Number);
    await f.engine.knex('subscriber_engagement').insert([
      { subscriber_id: older, messages_opened: 1, messages_clicked: 0, last_engaged_day: '2026-01-02' },
      { subscriber_id: later, messages_opened: 4, messages_clicked: 2, last_engaged_day: '2026-03-01' },
    ]);

    const before = await run('2026-02-01', [
      [fresh, { opened: 1, clicked: 1 }],
      [older, { opened: 2, clicked: 0 }],
      [later, { opened: 0, clicked: 3 }],
    ]);
    // The day each had before: none for a first engagement, the stored one otherwise.
    expect(Object.fromEntries(before)).to.deep.equal({ [fresh]: null, [older]: '2026-01-02', [later]: '2026-03-01' });
    const counts = async (id: number) => {
      const r = await row(id);
      return [Number(r.messages_opened), Number(r.messages_clicked), r.last_engaged_day];
    };
    expect(await counts(fresh)).to.deep.equal([1, 1, '2026-02-01']);
    expect(await counts(older)).to.deep.equal([3, 0, '2026-02-01']);
    // A run counted at an earlier day than the stored one adds its counts and leaves the later day.
    expect(await counts(later)).to.deep.equal([4, 5, '2026-03-01']);

    // The same subscribers again the next day: every row is stored now, each answered with its day.
    const again = await run('2026-03-02', [
      [fresh, { opened: 0, clicked: 1 }],
      [older, { opened: 1, clicked: 1 }],
    ]);
    expect(Object.fromEntries(again)).to.deep.equal({ [fresh]: '2026-02-01', [older]: '2026-02-01' });
    expect(await counts(fresh)).to.deep.equal([1, 2, '2026-03-02']);
    expect(await counts(older)).to.deep.equal([4, 1, '2026-03-02']);
    expect(await counts(later)).to.deep.equal([4, 5, '2026-03-01']);
  });

  it('moves a stored row without a day (counted before 1.10), and takes runs past 500 subscribers in pieces', async () => {
    // Ids without subscribers: the rows have no foreign key, and these tell engage's pieces apart.
    const ids = Array.from({ length: 620 }, (_, i) => 900_000 + i);
    const stored = ids.filter((id) => id % 2 === 0);
    await f.engine.knex.batchInsert(
      'subscriber_engagement',
      stored.map((id) => ({ subscriber_id: id, messages_opened: 1, messages_clicked: 0, last_engaged_day: null })),
      200,
    );
    const before = await run(
      '2026-04-01',
      ids.map((id) => [id, { opened: 1, clicked: id % 3 === 0 ? 2 : 0 }]),
    );
    expect(before.size).to.equal(ids.length);
    expect([...before.values()].every((day) => day === null)).to.equal(true);
    const rows = await f.engine
      .knex('subscriber_engagement')
      .whereIn('subscriber_id', ids)
      .orderBy('subscriber_id')
      .select();
    expect(
      rows.map((r) => [
        Number(r.subscriber_id),
        Number(r.messages_opened),
        Number(r.messages_clicked),
        r.last_engaged_day,
      ]),
    ).to.deep.equal(ids.map((id) => [id, id % 2 === 0 ? 2 : 1, id % 3 === 0 ? 2 : 0, '2026-04-01']));
  });
});
