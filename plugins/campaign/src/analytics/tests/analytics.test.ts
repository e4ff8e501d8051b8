import { expect } from 'chai';
import request from 'supertest';
import { createTenant, describeEachBackend, ManualClock, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { sendNow, inboundEndpoint } from '../../shared/tests/sending-support';
import { AnalyticsRebuild } from '../rebuild';
import { signedHeaders as signProviderA } from '@switchboard/provider-a/testing';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const STATUSES = ['active', 'unsubscribed', 'unconfirmed', 'bounced'] as const;
type Status = (typeof STATUSES)[number];
const MAIL = ['sent', 'delivered', 'opened', 'clicked', 'bounced', 'complained', 'unsubscribed'] as const;
type Mail = (typeof MAIL)[number];

/** A small deterministic generator: the same stream on every run. */
function random(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return (state >>> 8) % n;
  };
}

const dayOf = (at: Date) => at.toISOString().slice(0, 10);
const addDays = (day: string, n: number) => dayOf(new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY));
const daysFrom = (from: string, to: string) => {
  const days = [];
  for (let d = from; d <= to; d = addDays(d, 1)) days.push(d);
  return days;
};
const rate = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 100 : 0);

/**
 * What the analytics must answer, counted the slow way: every change the test makes is applied to this
 * model, which keeps each subscriber and the day-by-day figures.
 */
class Model {
  readonly subscribers = new Map<number, { status: Status; lastEngaged: string | null }>();
  readonly perDay = new Map<string, Record<string, number>>();
  /** Status counts at the end of each day that saw a change. */
  readonly endOfDay = new Map<string, Record<Status, number>>();
  readonly opened = new Set<number>();
  readonly clicked = new Set<number>();
  readonly opensByHour = Array.from({ length: 24 }, () => 0);

  constructor(private readonly clock: ManualClock) {}

  private get today() {
    return dayOf(this.clock.now());
  }

  count(figure: string, n = 1) {
    const day = this.perDay.get(this.today) ?? this.perDay.set(this.today, {}).get(this.today)!;
    day[figure] = (day[figure] ?? 0) + n;
  }

  private snapshot() {
    const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>;
    for (const s of this.subscribers.values()) counts[s.status]++;
    this.endOfDay.set(this.today, counts);
  }

  created(id: number, status: Status) {
    this.subscribers.set(id, { status, lastEngaged: null });
    this.count('new');
    this.snapshot();
  }

  moved(id: number, status: Status) {
    const s = this.subscribers.get(id)!;
    if (s.status === status) return;
    s.status = status;
    if (status === 'unsubscribed') this.count('unsubscribes');
    this.snapshot();
  }

  deleted(id: number) {
    this.subscribers.delete(id);
    this.snapshot();
  }

  mail(event: Mail, n = 1) {
    this.count(`mail.${event}`, n);
  }

  engaged(id: number, open: boolean, click: boolean) {
    let counted = false;
    if ((open || click) && !this.opened.has(id)) {
      this.opened.add(id);
      this.mail('opened');
      this.opensByHour[this.clock.now().getUTCHours()]++;
      counted = true;
    }
    if (click && !this.clicked.has(id)) {
      this.clicked.add(id);
      this.mail('clicked');
      counted = true;
    }
    if (counted) this.subscribers.get(id)!.lastEngaged = this.today;
  }

  /** Status counts at the end of a day: the last change on or before it. */
  countsAt(day: string): Record<Status, number> {
    const known = [...this.endOfDay.keys()].filter((d) => d <= day).sort();
    return known.length
      ? this.endOfDay.get(known[known.length - 1])!
      : (Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<Status, number>);
  }

  sum(figure: string, from: string, to: string) {
    return daysFrom(from, to).reduce((n, d) => n + (this.perDay.get(d)?.[figure] ?? 0), 0);
  }

  growth(days: number) {
    const today = this.today;
    const from = addDays(today, -(days - 1));
    const period = (start: string, end: string) => {
      const created = this.sum('new', start, end);
      const unsubscribes = this.sum('unsubscribes', start, end);
      const net = created - unsubscribes;
      return {
        new_subscribers: created,
        unsubscribes,
        net_growth: net,
        growth_rate: rate(net, this.countsAt(addDays(start, -1)).active),
      };
    };
    return {
      current_period: period(from, today),
      previous_period: period(addDays(from, -days), addDays(from, -1)),
      chart_data: daysFrom(from, today).map((date) => ({
        date,
        subscribers: this.countsAt(date).active,
        new: this.perDay.get(date)?.new ?? 0,
        unsubscribed: this.perDay.get(date)?.unsubscribes ?? 0,
      })),
    };
  }

  mailTimeline(days: number) {
    const today = this.today;
    return daysFrom(addDays(today, -(days - 1)), today).map((date) => ({
      date,
      ...Object.fromEntries(MAIL.map((m) => [m, this.perDay.get(date)?.[`mail.${m}`] ?? 0])),
    }));
  }

  engagement() {
    const today = this.today;
    const all = [...this.subscribers.values()];
    const within = (days: number) =>
      all.filter((s) => s.lastEngaged !== null && s.lastEngaged >= addDays(today, -(days - 1))).length;
    return {
      subscribers: all.length,
      active_last_30_days: within(30),
      active_last_90_days: within(90),
      never_engaged: all.filter((s) => s.lastEngaged === null).length,
      opens_by_hour: this.opensByHour.map((opens, hour) => ({ hour, opens })),
    };
  }
}

describeEachBackend('campaign: analytics', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  const clock = new ManualClock(new Date('2026-02-02T09:00:00Z'));
  before(async () => {
    sink = await smtpSink();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url }, clock);
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  const get = async (path: string) => (await f.api().get(path).expect(200)).body.data;

  it('answers as brute-force counts of a random stream of subscriber changes and provider events', async () => {
    const model = new Model(clock);
    const next = random(7);
    const list = (await f.api().post('/lists', { name: 'All', code: 'all' }).expect(201)).body.data.id as number;
    let n = 0;
    const create = async () => {
      const confirmed = next(4) !== 0;
      const res = await f
        .api()
        .post('/subscribers', { email: `s${n++}@example.com`, confirmed, lists: [list] })
        .expect(201);
      model.created(res.body.data.id, confirmed ? 'active' : 'unconfirmed');
    };
    const pick = (where: (s: { status: Status }) => boolean) => {
      const ids = [...model.subscribers].filter(([, s]) => where(s)).map(([id]) => id);
      return ids.length ? ids[next(ids.length)] : null;
    };
    const unsubscribe = async (where: (id: number) => boolean = () => true) => {
      const id = pick((s) => s.status !== 'unsubscribed');
      if (id === null || !where(id)) return;
      await f.api().post(`/subscribers/${id}/unsubscribe`, { reason: 'test' }).expect(200);
      model.moved(id, 'unsubscribed');
    };

    // Forty days of sign-ups, unsubscribes and deletions.
    for (let step = 0; step < 90; step++) {
      clock.advance(next(16) * HOUR + next(60) * 60_000);
      const what = next(10);
      if (what < 6) await create();
      else if (what < 8) await unsubscribe();
      else {
        const id = pick(() => true);
        if (id === null) continue;
        await f.api().delete(`/subscribers/${id}`).expect(200);
        model.deleted(id);
      }
    }

    // A mail to the list's active subscribers, then their provider's events over the following days.
    const recipients = [...model.subscribers].filter(([, s]) => s.status === 'active').map(([id]) => id);
    expect(recipients.length).to.be.above(10);
    const message = await sendNow(f, [list]);
    await waitFor(
      async () => (await f.api().get(`/messages/${message}`).expect(200)).body.data.status === 'sent',
      15_000,
    );
    model.mail('sent', recipients.length);
    const endpoint = await inboundEndpoint(f, { provider: 'provider_a', name: 'A', secret: 'analytics-secret' });
    const deliver = async (event: Record<string, unknown>) => {
      const body = JSON.stringify([event]);
      await request(f.server)
        .post(`/api/campaign/webhook/provider_a?endpoint=${endpoint.id}`)
        .set({ 'content-type': 'application/json', ...signProviderA('analytics-secret', body, clock.now()) })
        .send(body)
        .expect(200);
    };
    const KINDS = ['delivered', 'open', 'click', 'bounce', 'unsubscribe', 'spamreport'];
    for (let step = 0; step < 120; step++) {
      clock.advance(next(8) * HOUR + next(60) * 60_000);
      if (next(6) === 0) await create();
      const id = recipients[next(recipients.length)];
      if (!model.subscribers.has(id)) continue;
      const kind = KINDS[next(KINDS.length)];
      const event = {
        event: kind,
        ...(kind === 'bounce' ? { type: 'bounce' } : {}),
        email: `r${id}@example.com`,
        timestamp: Math.floor(clock.now().getTime() / 1000),
        sg_event_id: `a${step}`,
        campaign_message_id: String(message),
        campaign_subscriber_id: String(id),
      };
      await deliver(event);
      // A provider's retry now and then: counted once.
      if (next(8) === 0) await deliver(event);
      if (kind === 'delivered') model.mail('delivered');
      else if (kind === 'open' || kind === 'click') model.engaged(id, kind === 'open', kind === 'click');
      else if (kind === 'bounce') {
        model.mail('bounced');
        model.moved(id, 'bounced');
      } else {
        model.mail(kind === 'unsubscribe' ? 'unsubscribed' : 'complained');
        model.moved(id, 'unsubscribed');
      }
    }
    const today = dayOf(clock.now());
    expect(model.sum('mail.opened', '2000-01-01', today)).to.be.above(3);
    expect(model.sum('unsubscribes', addDays(today, -29), today)).to.be.above(0);

    // Growth: the default period is 30 days; 7 days on request.
    expect(await get('/analytics/growth')).to.deep.equal(model.growth(30));
    expect(await get('/analytics/growth?period=7d')).to.deep.equal(model.growth(7));

    // The dashboard beside the previous period.
    const dashboard = await get('/analytics/dashboard?period=30d');
    const previousEnd = model.countsAt(addDays(today, -30));
    const end = model.countsAt(today);
    const total = (c: Record<Status, number>) => STATUSES.reduce((a, s) => a + c[s], 0);
    const compared = (current: number, previous: number) => ({ current, previous, change: current - previous });
    expect(dashboard.current_period).to.deep.equal({ from: addDays(today, -29), to: today });
    expect(dashboard.subscribers).to.deep.equal({
      total: compared(total(end), total(previousEnd)),
      active: compared(end.active, previousEnd.active),
      unsubscribed: compared(end.unsubscribed, previousEnd.unsubscribed),
      bounced: compared(end.bounced, previousEnd.bounced),
      new: compared(
        model.sum('new', addDays(today, -29), today),
        model.sum('new', addDays(today, -59), addDays(today, -30)),
      ),
    });
    const inPeriod = (figure: string) => model.sum(figure, addDays(today, -29), today);
    expect(dashboard.mails.sent.current).to.equal(inPeriod('mail.sent'));
    expect(dashboard.mails.delivered.current).to.equal(inPeriod('mail.delivered'));
    expect(dashboard.rates.open_rate.current).to.equal(rate(inPeriod('mail.opened'), inPeriod('mail.sent')));
    expect(dashboard.rates.unsubscribe_rate.current).to.equal(
      rate(inPeriod('mail.unsubscribed'), inPeriod('mail.sent')),
    );
    expect(dashboard.best_messages.map((m: { id: number }) => m.id)).to.deep.equal(
      inPeriod('mail.sent') ? [message] : [],
    );

    // Performance: the mail figures day by day, and the message ranked first.
    const performance = await get('/analytics/performance?period=90d');
    expect(performance.timeline.map((d: Record<string, unknown>) => ({ date: d.date, ...pick7(d) }))).to.deep.equal(
      model.mailTimeline(90),
    );
    expect(performance.messages[0]).to.include({ rank: 1, id: message, sent: recipients.length });

    // Engagement: who was active, who never engaged, when mail is opened.
    const engagement = await get('/analytics/engagement');
    expect(engagement).to.deep.include(model.engagement());
    expect(engagement.opens_by_weekday).to.have.length(7);
    expect(engagement.opens_by_weekday.reduce((a: number, d: { opens: number }) => a + d.opens, 0)).to.equal(
      model.sum('mail.opened', addDays(today, -89), today),
    );

    // Rebuilt from the rows, the mail figures and engagement come back exactly.
    await f.engine.knex('analytics_daily').where({ organization_id: f.tenant.organizationId }).delete();
    const rebuilt = await campaignContainer(f.engine).resolve(AnalyticsRebuild).run(f.tenant.organizationId);
    expect(rebuilt.rows).to.be.above(0);
    expect((await get('/analytics/performance?period=90d')).timeline).to.deep.equal(performance.timeline);
    expect(await get('/analytics/engagement')).to.deep.equal(engagement);
    expect((await get('/analytics/dashboard')).subscribers.total.current).to.equal(total(end));
    // An organization that does not exist is said so, not rebuilt as nothing.
    const missing = await campaignContainer(f.engine)
      .resolve(AnalyticsRebuild)
      .run(999_999)
      .then(
        () => 'rebuilt',
        (err: Error) => err.message,
      );
    expect(missing).to.match(/Organization.*999999.*not found/i);
  });

  it('refuses an unknown period and a token without analytics:read', async () => {
    const res = await f.api().get('/analytics/dashboard?period=2w').expect(422);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    expect(res.body.error.details.field).to.equal('period');
    const outsider = await createTenant(f.engine, { permissions: ['subscribers:*'] });
    for (const path of ['dashboard', 'growth', 'performance', 'engagement']) {
      const denied = await request(f.server).get(`/api/campaign/analytics/${path}`).set(outsider.auth).expect(403);
      expect(denied.body.error.code).to.equal('AUTH_INSUFFICIENT_PERMISSIONS');
    }
  });

  it('answers zeros, not divisions by zero, for an organization without data', async () => {
    const empty = await createTenant(f.engine);
    const growth = (await request(f.server).get('/api/campaign/analytics/growth').set(empty.auth).expect(200)).body
      .data;
    expect(growth.current_period).to.deep.equal({ new_subscribers: 0, unsubscribes: 0, net_growth: 0, growth_rate: 0 });
    expect(growth.chart_data).to.have.length(30);
    const dashboard = (await request(f.server).get('/api/campaign/analytics/dashboard').set(empty.auth).expect(200))
      .body.data;
    expect(dashboard.rates.open_rate).to.deep.equal({ current: 0, previous: 0, change: 0 });
    expect(dashboard.best_messages).to.deep.equal([]);
  });
});

const pick7 = (d: Record<string, unknown>) => Object.fromEntries(MAIL.map((m) => [m, d[m]]));
