import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignAtVersion, campaignContainer } from '../src/shared/tests/support';
import { StatsRebuild } from '../src/events/stats-rebuild';
import { TrackingLinks } from '../src/sending/tracking-links';
import { down as withoutEngagements } from '../migrations/1.12/01-every-open-counted';

const HOUR = 3_600_000;

/**
 * Issue 24: 1.12 counts every open and click. A 1.11 database counted a mail's first open and click only;
 * upgraded, those figures become the unique ones and its marks the first tracked records (but where a
 * provider reported the open: its records count). A rebuild gives back 1.11's tracked opens and every
 * provider open recorded; opens after the upgrade each count. A rollback keeps every send, and the counters
 * as 1.11 counted (first opens and clicks).
 */
describeEachBackend('campaign: upgrading to 1.12 (every open and click counted)', (backend) => {
  let at: Awaited<ReturnType<typeof campaignAtVersion>> | undefined;
  after(async () => at?.close());

  it("keeps 1.11's first opens and clicks as the unique figures, counts every open after, and rolls back", async () => {
    at = await campaignAtVersion(backend(), '1.11');
    const { engine, api, tenant } = at;
    const knex = engine.knex;
    const org = tenant.organizationId;
    // The schema exactly as 1.11 left it (campaignAtVersion adds what today's code writes to).
    await withoutEngagements(knex);
    const sent = new Date(Date.now() - 30 * HOUR);
    const subscribers: number[] = [];
    for (const email of ['ada@old.test', 'alan@old.test', 'grace@old.test'])
      subscribers.push((await api.post('/subscribers', { email }).expect(201)).body.data.id);
    // As 1.11 counted them: Ada opened and clicked, Alan clicked (his click counted an open), both tracked;
    // Grace's provider reported two opens (recorded both, counted one).
    const [message] = await knex('messages').insert({
      organization_id: org,
      name: 'Old',
      subject: 'Old news',
      status: 'sent',
      count_sent: 3,
      count_read: 3,
      count_clicked: 2,
      sent_at: sent,
      created_at: sent,
      updated_at: sent,
    });
    const [send] = await knex('message_sends').insert({
      organization_id: org,
      message_id: message,
      status: 'sent',
      list_ids: '[]',
      created_at: sent,
      updated_at: sent,
    });
    const later = (hours: number) => new Date(sent.getTime() + hours * HOUR);
    const [ada, alan, grace] = subscribers;
    await knex('send_recipients').insert([
      { send_id: send, subscriber_id: ada, state: 'sent', sent_at: sent, opened_at: later(1), clicked_at: later(2) },
      { send_id: send, subscriber_id: alan, state: 'sent', sent_at: sent, opened_at: later(3), clicked_at: later(3) },
      { send_id: send, subscriber_id: grace, state: 'sent', sent_at: sent, opened_at: later(4), clicked_at: null },
    ]);
    await knex('inbound_events').insert(
      [4, 5].map((hours) => ({
        organization_id: org,
        webhook_endpoint_id: null,
        provider: 'provider_a',
        provider_event_id: `open:${hours}`,
        message_id: message,
        subscriber_id: grace,
        recipient: 'grace@old.test',
        event_type: 'opened',
        bounce: null,
        provider_message_id: null,
        payload: '{}',
        event_at: later(hours),
        received_at: later(hours),
        receipt: 'old',
      })),
    );
    const counters = async () =>
      knex('messages')
        .where({ id: message })
        .first('count_sent', 'count_read', 'count_clicked', 'unique_opened', 'unique_clicked');

    const applied = await engine.migrator().latest({ plugin: 'campaign', to: '1.12' });
    expect(applied).to.deep.equal([{ plugin: 'campaign', applied: ['1.12/01-every-open-counted'] }]);
    const upgraded = { count_sent: 3, count_read: 3, count_clicked: 2, unique_opened: 3, unique_clicked: 2 };
    expect(numbers(await counters())).to.deep.equal(upgraded);
    // Ada's and Alan's marks are tracked records now; Grace's open is her provider's records.
    expect(
      (await knex('tracked_events').where({ send_id: send }).orderBy('id').select('subscriber_id', 'event_type')).map(
        (r: Record<string, unknown>) => [Number(r.subscriber_id), r.event_type],
      ),
    ).to.have.deep.members([
      [ada, 'opened'],
      [alan, 'opened'],
      [ada, 'clicked'],
      [alan, 'clicked'],
    ]);
    // A rebuild from the records: the tracked opens of 1.11, and both of Grace's recorded opens.
    const rebuiltCounts = { ...upgraded, count_read: 4 };
    const rebuilt = await campaignContainer(engine).resolve(StatsRebuild).run(org, message);
    expect(rebuilt).to.include(rebuiltCounts);

    // Ada reads it again, twice: two opens counted, still one mail opened.
    const links = await campaignContainer(engine)
      .resolve(TrackingLinks)
      .forMail({ organizationId: org, sendId: send, subscriberId: ada }, { opens: true, clicks: false });
    const pixel = links.open!.slice(links.open!.indexOf('/api/campaign') + '/api/campaign'.length);
    await api.get(pixel).expect(200);
    await api.get(pixel).expect(200);
    const now = { ...rebuiltCounts, count_read: 6 };
    expect(numbers(await counters())).to.deep.equal(now);
    const shown = (await api.get(`/messages/${message}`).expect(200)).body.data;
    expect(shown.stats).to.deep.include({ opened: 6, clicked: 2, unique_opened: 3, unique_clicked: 2 });
    expect(shown.open_rate).to.equal(100);
    expect(await campaignContainer(engine).resolve(StatsRebuild).run(org, message)).to.include(now);

    // Back to 1.11: every send and recipient kept (SQLite copies `messages` to drop a column); the counters
    // hold what 1.11 counted in them, the mails opened and clicked (the totals of every open are lost).
    await engine.migrator().rollback({ plugin: 'campaign', to: '1.11' });
    expect(await knex.schema.hasTable('tracked_events')).to.equal(false);
    expect(await knex.schema.hasColumn('messages', 'unique_opened')).to.equal(false);
    expect(await knex('send_recipients').where({ send_id: send }).count({ n: '*' })).to.deep.equal([{ n: 3 }]);
    expect(numbers(await knex('messages').where({ id: message }).first('count_read', 'count_clicked'))).to.deep.equal({
      count_read: 3,
      count_clicked: 2,
    });
    // Upgraded again: the unique figures are the mails opened and clicked, not every open before.
    await engine.migrator().latest({ plugin: 'campaign' });
    expect(
      numbers(await knex('messages').where({ id: message }).first('unique_opened', 'unique_clicked')),
    ).to.deep.equal({ unique_opened: 3, unique_clicked: 2 });
  });
});

const numbers = (row: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
