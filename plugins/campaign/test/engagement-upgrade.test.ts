import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion, campaignContainer } from '../src/shared/tests/support';
import { down as withoutEngagementRows, up as withEngagementRows } from '../migrations/1.15/01-subscriber-engagement';
import { METRIC } from '../src/daily-figures';
import { AnalyticsRebuild } from '../src/analytics/rebuild';

const COLUMNS = ['messages_opened', 'messages_clicked', 'last_engaged_day'];

describeEachBackend('campaign: upgrading a 1.14 database to 1.15 (subscriber engagement rows)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('moves the counters and latest engagement days out of the subscribers, keeps them on read and delete, and rolls back', async () => {
    at = await campaignAtVersion(backend(), '1.14');
    const { engine, api, tenant } = at;
    const knex = engine.knex;
    const org = tenant.organizationId;
    // The schema exactly as 1.14 left it (campaignAtVersion adds what today's code writes to).
    await withoutEngagementRows(knex);
    expect(await knex.schema.hasTable('subscriber_engagement')).to.equal(false);

    const emails = ['ada@old.test', 'bob@old.test', 'cy@old.test', 'dee@old.test'];
    const subscribers = emails.map((email) => ({ email }));
    await api.post('/subscribers/batch', { subscribers, skip_confirmation: true }).expect(200);
    const [ada, bob, cy, dee] = (await knex('subscribers').orderBy('id').pluck('id')).map(Number);
    // As 1.14 counted them: Ada engaged two days ago, Cy yesterday; Bob's counters are older than
    // engagement days (1.10); Dee never engaged.
    const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);
    const twoDaysAgo = daysAgo(2);
    await knex('subscribers')
      .where({ id: ada })
      .update({ messages_opened: 3, messages_clicked: 1, last_engaged_day: twoDaysAgo });
    await knex('subscribers').where({ id: bob }).update({ messages_opened: 1 });
    await knex('subscribers')
      .where({ id: cy })
      .update({ messages_clicked: 2, last_engaged_day: daysAgo(1) });
    const lastEngaged = { organization_id: org, day: twoDaysAgo, metric: METRIC.lastEngaged };
    await knex('analytics_daily').insert([
      { ...lastEngaged, value: 1 },
      { ...lastEngaged, day: daysAgo(1), value: 1 },
    ]);

    // The newest subscriber deleted before the upgrade: its id is never handed out again (SQLite's copy of
    // `subscribers` restarted the sequence from the highest id left; the columns now drop in place).
    await api
      .post('/subscribers/batch', { subscribers: [{ email: 'eve@old.test' }], skip_confirmation: true })
      .expect(200);
    const eve = Number(
      await knex('subscribers')
        .max({ id: 'id' })
        .first()
        .then((r) => r?.id),
    );
    await knex('subscribers').where({ id: eve }).delete();

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.15' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.15/01-subscriber-engagement'] }]);
    for (const column of COLUMNS) expect(await knex.schema.hasColumn('subscribers', column)).to.equal(false);
    const fay = (await api.post('/subscribers', { email: 'fay@new.test' }).expect(201)).body.data.id as number;
    expect(fay).to.be.greaterThan(eve);
    await api.delete(`/subscribers/${fay}`).expect(200);

    const counters = async (id: number) => {
      const { messages_opened, messages_clicked } = (await api.get(`/subscribers/${id}`).expect(200)).body.data;
      return [messages_opened, messages_clicked];
    };
    expect([await counters(ada), await counters(bob), await counters(cy), await counters(dee)]).to.deep.equal([
      [3, 1],
      [1, 0],
      [0, 2],
      [0, 0],
    ]);
    // A row for each subscriber that had counters or a day, none for the others.
    const rows = await knex('subscriber_engagement').orderBy('subscriber_id').select();
    expect(rows.map((r) => [Number(r.subscriber_id), r.last_engaged_day])).to.deep.equal([
      [ada, twoDaysAgo],
      [bob, null],
      [cy, daysAgo(1)],
    ]);

    // The figures rebuilt from the moved rows are the live ones: Ada and Cy engaged within 30 days.
    const engagement = async () => {
      const { active_last_30_days, active_last_90_days } = (await api.get('/analytics/engagement').expect(200)).body
        .data;
      return { active_last_30_days, active_last_90_days };
    };
    const live = await engagement();
    expect(live).to.deep.equal({ active_last_30_days: 2, active_last_90_days: 2 });
    await campaignContainer(engine).resolve(AnalyticsRebuild).run(org);
    expect(await engagement()).to.deep.equal(live);

    // Deleting Ada takes her row and her day out of the day counts.
    await api.delete(`/subscribers/${ada}`).expect(200);
    expect(await knex('subscriber_engagement').where({ subscriber_id: ada }).first()).to.equal(undefined);
    expect(Number((await knex('analytics_daily').where(lastEngaged).first('value')).value)).to.equal(0);

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.14' });
    expect(await knex.schema.hasTable('subscriber_engagement')).to.equal(false);
    const back = await knex('subscribers')
      .orderBy('id')
      .select('id', ...COLUMNS);
    expect(
      back.map((r) => [Number(r.id), Number(r.messages_opened), Number(r.messages_clicked), r.last_engaged_day]),
    ).to.deep.equal([
      [bob, 1, 0, null],
      [cy, 0, 2, daysAgo(1)],
      [dee, 0, 0, null],
    ]);

    // Each direction runs again where it stopped, or after it finished, without harm; then up once more.
    await withoutEngagementRows(knex);
    await engine.migrator().latest({ plugin: 'campaign', to: '1.15' });
    await withEngagementRows(knex);
    expect([await counters(bob), await counters(cy), await counters(dee)]).to.deep.equal([
      [1, 0],
      [0, 2],
      [0, 0],
    ]);
  });
});
