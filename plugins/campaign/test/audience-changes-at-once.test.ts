import { expect } from 'chai';
import { createTenant, describeEachBackend, TestTenant } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../src/shared/tests/support';
import { SubscriberQuery } from '../src/audience/subscribers/query';
import { SubscriberWriter } from '../src/audience/subscribers/writer';

/**
 * Changes of the same subscribers and lists arriving at once (MariaDB runs them side by side; SQLite one
 * after another): the counters, the memberships' status copies and the answers stay as if one came
 * after the other, and a page read while rows go answers without them.
 */
describeEachBackend('campaign: subscribers and lists changed at once', (backend) => {
  let f: CampaignFixture;
  before(async function () {
    this.timeout(60_000);
    f = await campaignFixture(backend());
  });
  after(async () => f?.close());

  /** A tenant of its own with `count` active subscribers in one list. */
  async function listOfActive(count: number) {
    const tenant = await createTenant(f.engine, { name: `At once ${Math.random()}` });
    const list = (await f.api(tenant).post('/lists', { name: 'L', code: 'l' }).expect(201)).body.data.id as number;
    const subscribers = (
      await f
        .api(tenant)
        .post('/subscribers/batch', {
          skip_confirmation: true,
          subscribers: Array.from({ length: count }, (_, i) => ({ email: `at-once-${i}@example.com` })),
        })
        .expect(200)
    ).body.data;
    const ids = (
      await f.engine.knex('subscribers').where({ organization_id: tenant.organizationId }).orderBy('id').pluck('id')
    ).map(Number);
    expect(subscribers.created).to.equal(count);
    return { tenant, list, ids };
  }

  /** Every membership's status copy against its subscriber's status, and the list's active counter. */
  async function membershipsAgree(tenant: TestTenant, list: number) {
    const rows = await f.engine
      .knex('list_subscribers as m')
      .join('subscribers as s', 's.id', 'm.subscriber_id')
      .where('m.list_id', list)
      .select('m.subscriber_status', 's.status');
    for (const r of rows) expect(r.subscriber_status).to.equal(r.status);
    const active = rows.filter((r) => r.status === 'active').length;
    const stored = (await f.api(tenant).get(`/lists/${list}`).expect(200)).body.data;
    expect(stored.active_count).to.equal(active);
    return rows.length;
  }

  it('counts a subscriber unsubscribed three times at once as one unsubscribe', async () => {
    const { tenant, list, ids } = await listOfActive(12);
    await f.api(tenant).post(`/lists/${list}/subscribers`, { subscriber_ids: ids }).expect(200);
    const answers = await Promise.all(
      ids.flatMap((id) => [1, 2, 3].map(() => f.api(tenant).post(`/subscribers/${id}/unsubscribe`, {}))),
    );
    expect(answers.map((a) => a.status).filter((s) => s !== 200)).to.deep.equal([]);
    expect(await membershipsAgree(tenant, list)).to.equal(12);
    const page = (await f.api(tenant).get('/subscribers?status=unsubscribed').expect(200)).body;
    expect(page.pagination.total).to.equal(12);
    expect((await f.api(tenant).get('/subscribers').expect(200)).body.pagination.total).to.equal(0);
  }).timeout(60_000);

  it('copies the status a subscriber has into a membership added while it unsubscribes', async () => {
    const { tenant, list, ids } = await listOfActive(16);
    const answers = await Promise.all(
      ids.flatMap((id) => [
        f.api(tenant).post(`/lists/${list}/subscribers`, { subscriber_ids: [id] }),
        f.api(tenant).post(`/subscribers/${id}/unsubscribe`, {}),
      ]),
    );
    expect(answers.map((a) => a.status).filter((s) => s !== 200)).to.deep.equal([]);
    expect(await membershipsAgree(tenant, list)).to.equal(16);
  }).timeout(60_000);

  it('adds a subscriber to a list once when its lists are replaced while the list adds it', async () => {
    const { tenant, list, ids } = await listOfActive(16);
    const answers = await Promise.all(
      ids.flatMap((id) => [
        f.api(tenant).put(`/subscribers/${id}`, { lists: [list] }),
        f.api(tenant).post(`/lists/${list}/subscribers`, { subscriber_ids: [id] }),
      ]),
    );
    expect(
      answers.map((a) => `${a.status} ${a.body?.error?.message ?? ''}`).filter((s) => !s.startsWith('200')),
    ).to.deep.equal([]);
    expect(await membershipsAgree(tenant, list)).to.equal(16);
    expect((await f.api(tenant).get(`/lists/${list}`).expect(200)).body.data.subscriber_count).to.equal(16);
  }).timeout(60_000);

  it('imports existing subscribers into a list while the list adds them: each once, no 500', async () => {
    const { tenant, ids } = await listOfActive(200);
    // Each import in its own order (a deterministic shuffle): one waits on the rows the other locked.
    const shuffled = (seed: number) =>
      ids
        .map((_, i) => ({ email: `at-once-${i}@example.com`, key: (i * 7919 + seed * 104_729) % 200 }))
        .sort((a, b) => a.key - b.key)
        .map(({ email }) => ({ email }));
    // A duplicate membership answered the import 500 and lost its chunk in about half the rounds on MariaDB.
    for (let round = 0; round < 4; round++) {
      const list = (
        await f
          .api(tenant)
          .post('/lists', { name: `R${round}`, code: `r${round}` })
          .expect(201)
      ).body.data.id as number;
      const adds = async () => {
        const statuses = [];
        for (let k = 0; k < 200; k += 10)
          statuses.push(
            await f.api(tenant).post(`/lists/${list}/subscribers`, { subscriber_ids: ids.slice(k, k + 10) }),
          );
        return statuses;
      };
      const answers = (
        await Promise.all([
          ...[1, 2].map(async (seed) => [
            await f.api(tenant).post('/subscribers/batch', { lists: [list], subscribers: shuffled(seed + round) }),
          ]),
          adds(),
        ])
      ).flat();
      expect(
        answers.map((a) => `${a.status} ${a.body?.error?.message ?? ''}`).filter((s) => !s.startsWith('200')),
        `round ${round}`,
      ).to.deep.equal([]);
      expect(await membershipsAgree(tenant, list)).to.equal(200);
      expect((await f.api(tenant).get(`/lists/${list}`).expect(200)).body.data.subscriber_count).to.equal(200);
    }
  }).timeout(120_000);

  it('answers a page without the subscribers deleted after its ids were read, and a list deleted since as empty', async () => {
    const { tenant, ids } = await listOfActive(2);
    const query = campaignContainer(f.engine).resolve(SubscriberQuery);
    await f.api(tenant).delete(`/subscribers/${ids[1]}`).expect(200);
    const items = await (query as unknown as { items(ids: number[]): Promise<Array<{ id: number }>> }).items(ids);
    expect(items.map((s) => s.id)).to.deep.equal([ids[0]]);

    const gone = (await f.api(tenant).post('/lists', { name: 'Gone', code: 'gone' }).expect(201)).body.data.id;
    await f.api(tenant).delete(`/lists/${gone}`).expect(200);
    // As if the list had been deleted between its check and its count.
    const checked = Object.create(query) as SubscriberQuery;
    Object.assign(checked, { listFilter: async () => [gone] });
    const page = await checked.list(tenant.organizationId, { page: 1, per_page: 10, status: 'active', list_id: gone });
    expect(page).to.deep.include({ items: [], total: 0 });
  });

  it('adds no member to a list deleted after it was checked: the change is a 422, an import fails those rows alone', async () => {
    const { tenant, ids } = await listOfActive(1);
    const gone = (await f.api(tenant).post('/lists', { name: 'Going', code: 'going' }).expect(201)).body.data.id;
    await f.api(tenant).delete(`/lists/${gone}`).expect(200);
    const { assertListsExist, existingLists } = SubscriberWriter.prototype;
    // As if the list had been deleted between its check and the memberships' insert.
    SubscriberWriter.prototype.assertListsExist = async () => undefined;
    SubscriberWriter.prototype.existingLists = async (_trx, _org, lists) => new Set(lists);
    try {
      const put = await f.api(tenant).put(`/subscribers/${ids[0]}`, { lists: [gone] });
      expect(put.status, JSON.stringify(put.body)).to.equal(422);
      expect(put.body.error.details).to.deep.equal({ field: 'lists', rule: 'exists' });
      const created = await f.api(tenant).post('/subscribers', { email: 'gone-list@example.com', lists: [gone] });
      expect(created.status, JSON.stringify(created.body)).to.equal(422);
      const batch = await f
        .api(tenant)
        .post('/subscribers/batch', {
          subscribers: [{ email: 'gone-1@example.com', lists: [gone] }, { email: 'gone-2@example.com' }],
        })
        .expect(200);
      expect(batch.body.data).to.deep.include({ created: 1, failed: 1 });
      expect(batch.body.data.errors[0]).to.deep.include({ index: 0, field: 'lists', rule: 'exists' });
    } finally {
      Object.assign(SubscriberWriter.prototype, { assertListsExist, existingLists });
    }
    expect(await f.engine.knex('list_subscribers').where({ list_id: gone }).count({ n: '*' })).to.deep.equal([
      { n: 0 },
    ]);
  });
});
