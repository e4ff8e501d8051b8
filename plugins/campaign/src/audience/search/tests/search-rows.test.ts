import { expect } from 'chai';
import type { Knex } from 'knex';
import request from 'supertest';
import { describeEachBackend } from '@switchboard/core/testing';
import { dialectOfKnex } from '@switchboard/core';
import { campaignAtVersion, campaignFixture, CampaignFixture } from '../../../shared/tests/support';

/**
 * The rows that carry a subscriber into meta and list search, read without any index on subscriber_id
 * (names and emails are found through the substring index, which keeps stale entries: searches show it).
 */
async function searchRowsOf(knex: Knex, subscriberId: number) {
  const meta = (
    await knex('subscriber_meta')
      .where({ subscriber_id: subscriberId })
      .select('meta_key', 'meta_value', 'subscriber_status')
  )
    .map(
      (r: { meta_key: string; meta_value: string; subscriber_status: string }) =>
        `${r.meta_key}=${r.meta_value}:${r.subscriber_status}`,
    )
    .sort();
  const lists = (await knex('list_subscribers').where({ subscriber_id: subscriberId }).select('subscriber_status')).map(
    (r: { subscriber_status: string }) => r.subscriber_status,
  );
  return { meta, lists };
}

/** Ids that a search finds (searches without status: look at active subscribers). */
const foundBy = async (get: (path: string) => request.Test, search: string) =>
  (await get(`/subscribers?search=${encodeURIComponent(search)}`).expect(200)).body.data.map(
    (s: { id: number }) => s.id,
  );

describeEachBackend('campaign: search rows follow every change of a subscriber', (backend) => {
  let f: CampaignFixture;
  let list: number;
  before(async () => {
    f = await campaignFixture(backend());
    list = (await f.api().post('/lists', { name: 'Readers', code: 'readers' }).expect(201)).body.data.id;
  });
  after(() => f.close());

  it('creates, updates, unsubscribes, re-imports and deletes with exactly the derived rows left', async () => {
    const created = await f
      .api()
      .post('/subscribers', {
        email: 'ada.lovelace@example.com',
        first_name: 'Ada',
        last_name: 'Lovelace',
        lists: [list],
        meta_data: { plan: 'pro', tags: ['poetry', 'math'] },
      })
      .expect(201);
    const id = created.body.data.id as number;
    for (const prefix of ['ada*', 'lovelace*', 'ada.lov*', 'exam*', 'name:lov*'])
      expect(await foundBy(f.api().get, prefix), prefix).to.deep.equal([id]);
    expect(await searchRowsOf(f.engine.knex, id)).to.deep.equal({
      meta: ['plan=pro:active', 'tags=math:active', 'tags=poetry:active'],
      lists: ['active'],
    });

    await f
      .api()
      .put(`/subscribers/${id}`, { first_name: 'Augusta', meta_data: { plan: 'basic' } })
      .expect(200);
    expect(await foundBy(f.api().get, 'name:aug*')).to.deep.equal([id]);
    expect(await foundBy(f.api().get, 'name:ada*')).to.deep.equal([]);
    expect(await foundBy(f.api().get, 'ada*'), 'the email still starts with ada').to.deep.equal([id]);
    expect((await searchRowsOf(f.engine.knex, id)).meta).to.deep.equal(['plan=basic:active']);
    expect(await foundBy(f.api().get, 'name:ada')).to.deep.equal([]);
    expect(await foundBy(f.api().get, 'name:augusta')).to.deep.equal([id]);
    expect(await foundBy(f.api().get, 'meta.plan:pro')).to.deep.equal([]);

    await f
      .api()
      .post('/subscribers/batch', {
        subscribers: [{ email: 'ada.lovelace@example.com', last_name: 'King', meta_data: { plan: 'pro' } }],
        skip_confirmation: true,
      })
      .expect(200);
    const afterImport = await searchRowsOf(f.engine.knex, id);
    expect(await foundBy(f.api().get, 'name:king*')).to.deep.equal([id]);
    expect(await foundBy(f.api().get, 'name:lovelace*')).to.deep.equal([]);
    expect(afterImport.meta).to.deep.equal(['plan=pro:active']);

    await f.api().post(`/subscribers/${id}/unsubscribe`, { reason: 'too many mails' }).expect(200);
    const unsubscribed = await searchRowsOf(f.engine.knex, id);
    expect(await foundBy(f.api().get, 'name:aug*')).to.deep.equal([]);
    expect(await foundBy(f.api().get, 'status:unsubscribed name:aug* king*')).to.deep.equal([id]);
    expect(unsubscribed.meta).to.deep.equal(['plan=pro:unsubscribed']);
    expect(unsubscribed.lists).to.deep.equal(['unsubscribed']);
    expect(await foundBy(f.api().get, 'status:unsubscribed name:augusta')).to.deep.equal([id]);

    await f.api().delete(`/subscribers/${id}`).expect(200);
    expect(await searchRowsOf(f.engine.knex, id)).to.deep.equal({ meta: [], lists: [] });
    expect(await foundBy(f.api().get, 'status:unsubscribed name:aug*')).to.deep.equal([]);
    const readers = await f.api().get(`/lists/${list}`).expect(200);
    expect(readers.body.data).to.deep.include({ subscriber_count: 0, active_count: 0 });
  });

  it('re-imports subscribers of different statuses in one batch, each row keeping its own status', async () => {
    const ids: number[] = [];
    for (const email of ['mixed.one@example.org', 'mixed.two@example.org'])
      ids.push((await f.api().post('/subscribers', { email, first_name: 'Mixed' }).expect(201)).body.data.id);
    await f.api().post(`/subscribers/${ids[1]}/unsubscribe`, {}).expect(200);
    const rows = ['mixed.one@example.org', 'mixed.two@example.org'].map((email) => ({
      email,
      first_name: 'Renamed',
      meta_data: { wave: 'two' },
    }));
    await f.api().post('/subscribers/batch', { subscribers: rows, skip_confirmation: true }).expect(200);
    const [one, two] = await Promise.all(ids.map((id) => searchRowsOf(f.engine.knex, id)));
    expect(one.meta).to.deep.equal(['wave=two:active']);
    expect(two.meta).to.deep.equal(['wave=two:unsubscribed']);
    expect(await foundBy(f.api().get, 'name:renamed')).to.deep.equal([ids[0]]);
    expect(await foundBy(f.api().get, 'name:renamed status:unsubscribed')).to.deep.equal([ids[1]]);
    expect(await foundBy(f.api().get, 'name:mix*')).to.deep.equal([]);
    expect(await foundBy(f.api().get, 'name:mix* status:unsubscribed')).to.deep.equal([]);
  });

  it('takes meta values that differ only in case (one key on MySQL, two on SQLite) and finds them', async () => {
    const res = await f
      .api()
      .post('/subscribers', { email: 'grace@example.com', meta_data: { tags: ['Navy', 'navy'] } })
      .expect(201);
    const { meta } = await searchRowsOf(f.engine.knex, res.body.data.id);
    expect(meta).to.deep.equal(
      dialectOfKnex(f.engine.knex) === 'mysql' ? ['tags=Navy:active'] : ['tags=Navy:active', 'tags=navy:active'],
    );
    expect(await foundBy(f.api().get, 'meta.tags:Navy')).to.deep.equal([res.body.data.id]);
    await f
      .api()
      .put(`/subscribers/${res.body.data.id}`, { meta_data: { tags: ['navy'] } })
      .expect(200);
    expect((await searchRowsOf(f.engine.knex, res.body.data.id)).meta).to.deep.equal(['tags=navy:active']);
  });
});

describeEachBackend('campaign: upgrading a 1.0 database to 1.1', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('keeps the 1.0 subscribers searchable and deletes their rows without foreign keys; rolls back to 1.0', async () => {
    at = await campaignAtVersion(backend(), '1.0');
    const { engine, api } = at;
    const knex = engine.knex;

    // A subscriber written as 1.0 wrote it: search rows cascading through foreign keys.
    const list = (await api.post('/lists', { name: 'Old', code: 'old' }).expect(201)).body.data.id;
    const old = (
      await api
        .post('/subscribers', {
          email: 'old@example.com',
          first_name: 'Olga',
          lists: [list],
          meta_data: { plan: 'pro' },
        })
        .expect(201)
    ).body.data.id;
    expect((await searchRowsOf(knex, old)).meta).to.deep.equal(['plan=pro:active']);

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.1' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.1/01-search-rows-by-primary-key'] }]);
    expect(await foundBy(api.get, 'name:olga')).to.deep.equal([old]);
    await api.delete(`/subscribers/${old}`).expect(200);
    expect(await searchRowsOf(knex, old)).to.deep.equal({ meta: [], lists: [] });

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.0' });
    const kept = (
      await api.post('/subscribers', { email: 'kept@example.com', first_name: 'Kim', lists: [list] }).expect(201)
    ).body.data.id;
    // 1.0's foreign keys are back: deleting the subscriber row cascades to its search rows.
    await knex('subscribers').where({ id: kept }).delete();
    expect(await searchRowsOf(knex, kept)).to.deep.equal({ meta: [], lists: [] });

    // 1.0 data upgraded to the latest version in one go (the raw delete above left the list counter as it was).
    const member = (
      await api.post('/subscribers', { email: 'member@example.com', first_name: 'Mia', lists: [list] }).expect(201)
    ).body.data.id;
    const counted = async () => (await api.get(`/lists/${list}`).expect(200)).body.data.subscriber_count as number;
    const before = await counted();
    if (dialectOfKnex(knex) === 'mysql') {
      // A 1.1 run killed after its first two ALTERs (each commits on its own on MariaDB): run again, it goes on.
      await knex.schema.alterTable('subscriber_tokens', (t) => t.dropForeign(['subscriber_id']));
      await knex.schema.alterTable('subscriber_tokens', (t) =>
        t.dropIndex(['subscriber_id'], 'subscriber_tokens_subscriber_idx'),
      );
    }
    await engine.migrator().latest({ plugin: 'campaign' });
    expect(await foundBy(api.get, 'list:old name:mia')).to.deep.equal([member]);
    expect(
      (await api.get(`/subscribers?list_id=${list}`).expect(200)).body.data.map((s: { id: number }) => s.id),
    ).to.deep.equal([member]);
    await api.delete(`/subscribers/${member}`).expect(200);
    expect(await searchRowsOf(knex, member)).to.deep.equal({ meta: [], lists: [] });
    expect(await counted()).to.equal(before - 1);
  });
});
