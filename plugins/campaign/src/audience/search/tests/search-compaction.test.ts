import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { GramCompaction } from '../gram-compaction';
import { appendGramRows, GRAM_TABLE } from '../gram-rows';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../../shared/tests/support';

describeEachBackend('campaign: compaction of the substring index', (backend) => {
  let f: CampaignFixture;
  let club: number;
  before(async () => {
    f = await campaignFixture(backend());
    club = (await f.api().post('/lists', { name: 'Club', code: 'club' }).expect(201)).body.data.id;
  });
  after(() => f.close());

  const compaction = () => campaignContainer(f.engine).resolve(GramCompaction);
  const importChunk = async (prefix: string, from: number, count: number, lists: number[] = []) =>
    f
      .api()
      .post('/subscribers/batch', {
        subscribers: Array.from({ length: count }, (_, i) => ({
          email: `${prefix}${from + i}@chunks.test`,
          first_name: `Zork${from + i}`,
          last_name: (from + i) % 3 ? 'Quill' : 'Brandt',
        })),
        lists,
        skip_confirmation: true,
      })
      .expect(200);
  const search = async (text: string) => {
    const res = await f
      .api()
      .get(`/subscribers?search=${encodeURIComponent(text)}&per_page=100`)
      .expect(200);
    return { ids: res.body.data.map((s: { id: number }) => s.id), total: res.body.pagination.total };
  };
  /** (status, bucket, block) groups of the index with more than one row. */
  const splitGroups = async () =>
    (
      await f.engine
        .knex(GRAM_TABLE)
        .groupBy('subscriber_status', 'bucket', 'block')
        .havingRaw('count(*) > 1')
        .select('block')
    ).length;

  it('merges the rows each write left into one per block, and every search answers as before', async () => {
    for (let chunk = 0; chunk < 4; chunk++) await importChunk('z', chunk * 150, 150, chunk % 2 ? [club] : []);
    const unconfirmed = await f.api().post('/subscribers', { email: 'zork-late@chunks.test', first_name: 'Zork' });
    expect(unconfirmed.status).to.equal(201);
    const queries = ['name:zork', 'name:zork1', 'k12', 'name:brandt', 'name:zork list:club', 'zo', 'chunks.test z4'];
    const before = await Promise.all(queries.map(search));
    expect(before[0].total).to.equal(601);
    expect(before[4].total).to.equal(300);
    expect(await splitGroups()).to.be.greaterThan(0);

    const report = await compaction().run();
    expect(report.complete).to.equal(true);
    expect(report.blocks).to.be.greaterThan(0);
    expect(report.rowsAfter).to.equal(report.blocks);
    expect(report.rowsBefore).to.be.greaterThan(report.rowsAfter);
    expect(await splitGroups()).to.equal(0);
    expect(await Promise.all(queries.map(search))).to.deep.equal(before);
    expect((await compaction().run()).blocks).to.equal(0);
  });

  it('finds what was written after a merge, and merges it again', async () => {
    const added = (await importChunk('late', 0, 20)).body.data;
    expect(added.created).to.equal(20);
    const renamed = (await search('name:zork7')).ids[0];
    await f.api().put(`/subscribers/${renamed}`, { first_name: 'Renamedxyz' }).expect(200);
    const expected = { late: await search('late1'), renamed: await search('name:renamedxyz') };
    expect(expected.late.total).to.equal(11);
    expect(expected.renamed.ids).to.deep.equal([renamed]);
    expect(await splitGroups()).to.be.greaterThan(0);
    const report = await compaction().run();
    expect(report.blocks).to.be.greaterThan(0);
    expect(await splitGroups()).to.equal(0);
    expect(await search('late1')).to.deep.equal(expected.late);
    expect(await search('name:renamedxyz')).to.deep.equal(expected.renamed);
    // The old name's entries stay (the index only grows); confirmation against the row still drops them.
    expect((await search('name:zork7')).ids).to.not.include(renamed);
  });

  it('loses nothing when imports run while it merges', async () => {
    const imports = Promise.all([0, 1, 2, 3].map((i) => importChunk('par', 1000 + i * 200, 200, [club])));
    let done = false;
    void imports.finally(() => (done = true));
    let runs = 0;
    while (!done || runs === 0) {
      await compaction().run();
      runs++;
    }
    await imports;
    expect((await search('par1')).total).to.equal(800);
    expect((await search('par1 list:club')).total).to.equal(800);
    await compaction().run();
    expect(await splitGroups()).to.equal(0);
    expect((await search('par1 list:club')).total).to.equal(800);
  });

  it('runs a bounded pass from the scheduler and goes on where the budget stopped it', async () => {
    await importChunk('budget', 0, 50);
    await importChunk('budget', 50, 50);
    const service = compaction();
    const stopped = await service.run(0);
    expect(stopped.complete).to.equal(false);
    expect(service.inPass).to.equal(true);
    const rest = await service.run();
    expect(rest.complete).to.equal(true);
    expect(rest.blocks).to.be.greaterThan(0);
    expect(service.inPass).to.equal(false);
    expect(await splitGroups()).to.equal(0);
  });

  it('indexes a new subscriber that takes the id of a deleted one whose rows stay', async () => {
    const last = (await importChunk('reuse', 0, 1)).body.data;
    expect(last.created).to.equal(1);
    const lastId = Number((await f.engine.knex('subscribers').max({ id: 'id' }))[0].id);
    // Rows as a deleted subscriber of each of the next two ids left them (the index keeps them).
    for (const id of [lastId + 1, lastId + 2])
      await appendGramRows(f.engine.knex, f.tenant.organizationId, [
        { id, email: `ghost${id}@gone.test`, status: 'active', first_name: 'Ghostly', last_name: null },
      ]);
    const batch = await importChunk('taker', 0, 1);
    expect(batch.body.data.created).to.equal(1);
    const single = await f
      .api()
      .post('/subscribers', { email: 'single@taker.test', first_name: 'Solo', confirmed: true });
    expect(single.status).to.equal(201);
    expect(single.body.data.id).to.equal(lastId + 2);
    expect((await search('taker0')).ids).to.deep.equal([lastId + 1]);
    expect((await search('name:solo')).ids).to.deep.equal([lastId + 2]);
    expect((await search('ghost')).total).to.equal(0);
  });
});
