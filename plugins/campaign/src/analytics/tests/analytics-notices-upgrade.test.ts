import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion } from '../../shared/tests/support';
import { AnalyticsRebuild } from '../rebuild';
import { down as withoutAnalytics } from '../../../migrations/1.10/01-analytics-rollups';
import { down as withoutNotices } from '../../../migrations/1.10/02-changelog-notices';
import { ChangelogPublisher } from '../../changelog';

const DAY = 86_400_000;
const dayOf = (at: Date) => at.toISOString().slice(0, 10);

describeEachBackend('campaign: upgrading to 1.10 (analytics, changelog notices)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it('keeps the subscribers and changelog subscriptions of a 1.9 database, counts them in, notifies them, and rolls back', async () => {
    at = await campaignAtVersion(backend(), '1.9');
    const { engine, api, tenant } = at;
    const knex = engine.knex;
    const org = tenant.organizationId;
    // The schema exactly as 1.9 left it (campaignAtVersion adds what today's code writes to).
    await withoutAnalytics(knex);
    await withoutNotices(knex);
    const now = new Date();
    const daysAgo = (n: number) => new Date(now.getTime() - n * DAY);
    // Rows as 1.9 wrote them: three subscribers, one of them unsubscribed since, and a sent message.
    const subscriber = (email: string, created: Date, unsubscribed: Date | null) => ({
      organization_id: org,
      email,
      status: unsubscribed ? 'unsubscribed' : 'active',
      meta_data: '{}',
      unsubscribed_at: unsubscribed,
      created_at: created,
      updated_at: created,
    });
    await knex('subscribers').insert([
      subscriber('ada@old.test', daysAgo(40), null),
      subscriber('bob@old.test', daysAgo(10), daysAgo(3)),
      subscriber('cy@old.test', daysAgo(3), null),
    ]);
    await knex('subscriber_counts').insert([
      { organization_id: org, status: 'active', count: 2 },
      { organization_id: org, status: 'unsubscribed', count: 1 },
      { organization_id: org, status: 'unconfirmed', count: 0 },
      { organization_id: org, status: 'bounced', count: 0 },
    ]);
    const ids: number[] = (await knex('subscribers').orderBy('id').pluck('id')).map(Number);
    const [message] = await knex('messages').insert({
      organization_id: org,
      name: 'Old',
      subject: 'Old news',
      status: 'sent',
      count_sent: 2,
      count_read: 1,
      sent_at: daysAgo(5),
      created_at: daysAgo(6),
      updated_at: daysAgo(5),
    });
    const [send] = await knex('message_sends').insert({
      organization_id: org,
      message_id: message,
      status: 'sent',
      list_ids: '[]',
      created_at: daysAgo(5),
      updated_at: daysAgo(5),
    });
    await knex('send_recipients').insert([
      { send_id: send, subscriber_id: ids[0], state: 'sent', sent_at: daysAgo(5), opened_at: daysAgo(4) },
      { send_id: send, subscriber_id: ids[1], state: 'sent', sent_at: daysAgo(5), opened_at: null },
    ]);
    await knex('changelog_subscriptions').insert({
      organization_id: org,
      email: 'dev@old.test',
      webhook_url: null,
      webhook_url_hash: '',
      created_at: daysAgo(20),
    });
    expect(await knex.schema.hasTable('analytics_daily')).to.equal(false);

    // Up to today's version: 1.11 counts the subscription of 1.9 confirmed (e-mail consent came later).
    const applied = await engine.migrator().latest({ plugin: 'campaign' });
    expect(applied[0].applied).to.include('1.10/01-analytics-rollups');
    expect(await knex('subscribers').count({ n: '*' })).to.deep.equal([{ n: 3 }]);
    const rebuilt = await engine.contexts.get('campaign')!.container.resolve(AnalyticsRebuild).run(org);
    expect(rebuilt).to.include({ organizations: 1 });

    const growth = (await api.get('/analytics/growth').expect(200)).body.data;
    expect(growth.current_period).to.deep.equal({
      new_subscribers: 2,
      unsubscribes: 1,
      net_growth: 1,
      growth_rate: 100,
    });
    const chart = new Map(growth.chart_data.map((d: { date: string }) => [d.date, d]));
    expect(chart.get(dayOf(daysAgo(4)))).to.deep.include({ subscribers: 2 });
    expect(chart.get(dayOf(now))).to.deep.include({ subscribers: 2 });
    const dashboard = (await api.get('/analytics/dashboard').expect(200)).body.data;
    expect(dashboard.mails.sent.current).to.equal(2);
    expect(dashboard.rates.open_rate.current).to.equal(50);
    expect(dashboard.messages_sent.current).to.equal(1);
    // A subscription of 1.9 hears of the first entry published.
    const published = await engine.contexts
      .get('campaign')!
      .container.resolve(ChangelogPublisher)
      .publish([{ key: 'v1.10', title: 'Analytics', body: 'Live.' }]);
    expect(published.published).to.deep.equal([{ key: 'v1.10', title: 'Analytics', notices: 1 }]);

    await engine.migrator().rollback({ plugin: 'campaign', to: '1.9' });
    expect(await knex.schema.hasTable('analytics_daily')).to.equal(false);
    expect(await knex.schema.hasColumn('subscribers', 'last_engaged_day')).to.equal(false);
    expect(await knex('subscribers').count({ n: '*' })).to.deep.equal([{ n: 3 }]);
    expect(await knex('send_recipients').count({ n: '*' })).to.deep.equal([{ n: 2 }]);
    expect(await knex.schema.hasTable('changelog_notices')).to.equal(false);
    expect(await knex('changelog_subscriptions').where({ email: 'dev@old.test' }).count({ n: '*' })).to.deep.equal([
      { n: 1 },
    ]);
  });
});
