import path from 'node:path';
import { expect } from 'chai';
import { chromium } from 'playwright-core';
import type { AddressInfo } from 'node:net';
import { JobQueues, SERVICES } from '@switchboard/core';
import { describeEachBackend, ManualClock } from '@switchboard/core/testing';
import { WorkerStatusService } from '../service';
import { ServersService } from '../../servers';
import { addServer, API_KEY, monitorFixture, MonitorFixture, organization } from '../../shared/tests/support';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** `UPDATE_DASHBOARD_SCREENSHOT=1` keeps the page as a phone shows it in docs/ (docs/operations.md, Server monitor). */
const repoDocs = path.resolve(__dirname, '../../../../../../docs');

describeEachBackend('server-monitor: worker status and dashboard', (backend) => {
  let f: MonitorFixture;
  const clock = new ManualClock(new Date('2026-06-01T12:00:30Z'));
  before(async () => {
    f = await monitorFixture(backend(), { clock, env: { PUBLIC_URL: 'http://mon.test' } });
  });
  after(async () => f?.close());

  const ago = (ms: number) => new Date(clock.now().getTime() - ms);
  const status = () => f.engine.contexts.get('server-monitor')!.container.resolve(WorkerStatusService);

  it('reports compliance per plan from when servers were last checked, queue lengths and recent breaches', async () => {
    const pro = await organization(f.engine, { plan: 'pro' });
    const free = await organization(f.engine, { plan: 'free' });
    const idle = await organization(f.engine, { plan: 'enterprise', subscription: 'inactive' });
    await addServer(f.engine, pro, 'https://a.test/', { last_checked_at: ago(30_000) });
    await addServer(f.engine, pro, 'https://b.test/', { last_checked_at: ago(120_000) });
    await addServer(f.engine, free, 'https://c.test/', { last_checked_at: ago(100_000) });
    await addServer(f.engine, idle, 'https://d.test/');
    // Two minutes of breach within the hour (one of them both plans'), one long ago, one good minute.
    const sample = (at: Date, checked: number, total: number, tier = 'premium') =>
      f.engine.knex('monitor_sla_samples').insert({ sampled_at: at, tier, checked, total });
    await sample(ago(10 * 60_000), 1, 2);
    await sample(ago(10 * 60_000), 0, 1, 'free');
    await sample(ago(20 * 60_000), 98, 100);
    await sample(ago(30 * 60_000), 100, 100);
    await sample(ago(3 * 3_600_000), 0, 2);

    const body = (await f.call('/worker-status').expect(200)).body;
    expect(body).to.deep.equal({
      success: true,
      status: 'critical',
      timestamp: '2026-06-01T12:00:30.000Z',
      sla_compliance: {
        premium: { percentage: 50, checked: 1, total: 2 },
        free: { percentage: 100, checked: 1, total: 1 },
      },
      queue_status: { premium: 0, free: 0 },
      recent_breaches: 2,
      dashboard_url: `http://mon.test/api/servermonitor/dashboard/${API_KEY}`,
    });

    // Queued checks show in the queues (no worker runs here): a and b, and c.
    await f.call('/check/all').expect(200);
    const queued = (await f.call('/worker-status').expect(200)).body.queue_status;
    expect(queued).to.deep.equal({ premium: 2, free: 1 });

    // The minute's sample is taken once per minute and tier, whoever takes it.
    await status().sample();
    await status().sample();
    const [{ n }] = await f.engine.knex('monitor_sla_samples').where('sampled_at', '>=', ago(60_000)).count({ n: '*' });
    expect(Number(n)).to.equal(2);
  });

  it('serves an on-call dashboard a person reads on a phone: what is down first, by colour and word, then the figures', async () => {
    for (let minute = 1; minute <= 5; minute++)
      await f.engine.knex('monitor_sla_samples').insert([
        { sampled_at: ago((minute * 15 + 2) * 60_000), tier: 'premium', checked: 95 + minute, total: 100 },
        { sampled_at: ago((minute * 15 + 2) * 60_000), tier: 'free', checked: 100, total: 100 },
      ]);
    // What a person on call must see: a server down for 2 h with its last error, one down for 5 min,
    // a server answering 404, an alert nobody heard, a missing heartbeat, a certificate ending in 3 days.
    const shop = await organization(f.engine, { plan: 'pro' });
    const dead = await addServer(f.engine, shop, 'https://dead-port.test/', {
      title: 'Dead port',
      created_at: ago(3 * 3_600_000),
      state: 'down',
      status: 'unreachable',
      is_up: false,
      failing_since: ago(2 * 3_600_000 + 5 * 60_000),
    });
    await f.engine.knex('monitor_check_results').insert({
      server_id: dead,
      checked_at: ago(30_000),
      up: false,
      status: 'unreachable',
      error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9',
    });
    await addServer(f.engine, shop, 'https://missing-page.test/', {
      title: 'Missing page',
      created_at: ago(3 * 3_600_000),
      state: 'down',
      status: '404',
      is_up: false,
      failing_since: ago(5 * 60_000),
    });
    await addServer(f.engine, shop, 'https://paused.test/', { title: 'Paused one', state: 'paused' });
    const cron = await addServer(f.engine, shop, 'https://cron.test/', {
      title: 'Nightly cron',
      created_at: ago(3 * 3_600_000),
      state: 'up',
      is_up: true,
    });
    const [nightly] = await f.engine.knex('monitor_heartbeats').insert({
      server_id: cron,
      token: 'dashboard-test-token',
      interval_seconds: 3600,
      grace_seconds: 60,
      due_at: ago(40 * 60_000),
      state: 'down',
      created_at: ago(86_400_000),
      updated_at: ago(40 * 60_000),
    });
    await f.engine.knex('monitor_certificates').insert({
      server_id: cron,
      valid_to: new Date(clock.now().getTime() + 3 * 86_400_000),
      issuer: 'CN=Test CA',
      subject: 'CN=cron.test',
      checked_at: ago(3_600_000),
    });
    await f.engine.knex('monitor_alerts').insert({
      organization_id: shop,
      server_id: dead,
      kind: 'server-down',
      channel: 'none',
      recipient: '',
      subject: 'DOWN: Dead port',
      body: 'is down',
      state: 'unheard',
      created_at: ago(2 * 3_600_000),
    });
    // An alert whose every try failed, to two administrators (two rows): shown once for a day, then no more.
    const failedAlert = (recipient: string, at: Date) => ({
      organization_id: shop,
      server_id: dead,
      kind: 'server-down',
      channel: 'email',
      recipient,
      subject: 'DOWN: Dead port',
      body: 'is down',
      state: 'failed',
      attempts: 10,
      error: 'connect ECONNREFUSED',
      created_at: at,
    });
    await f.engine.knex('monitor_alerts').insert([
      failedAlert('a@shop.test', ago(3_600_000)),
      failedAlert('b@shop.test', ago(3_600_000)),
      failedAlert('a@shop.test', ago(2 * 86_400_000)),
      // Still being tried: its relay has failed 4 tries so far.
      { ...failedAlert('c@shop.test', ago(600_000)), subject: 'DOWN: Shop API', state: 'pending', attempts: 4 },
    ]);

    const url = (await f.call('/worker-status').expect(200)).body.dashboard_url.replace(
      'http://mon.test',
      `http://127.0.0.1:${(f.server.address() as AddressInfo).port}`,
    );
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true });
      const answer = await page.goto(url);
      expect(answer?.status()).to.equal(200);
      expect(await page.textContent('#headline')).to.equal('2 servers down');
      // Longest outage first, since when, how long, the last error.
      const down = await page.locator('#down li').allInnerTexts();
      expect(down).to.have.length(2);
      expect(down[0]).to.match(/^DOWN Dead port for 2 h 5 min/);
      expect(down[0]).to.contain('since 2026-06-01 09:55 UTC');
      expect(down[0]).to.contain('ECONNREFUSED');
      expect(down[1]).to.match(/^DOWN Missing page for 5 min/);
      expect(down[1]).to.contain('answered 404');
      // By colour too: the word on red, the header on the problems' colour.
      const red = 'rgb(180, 35, 24)';
      expect(
        await page
          .locator('#down li .word')
          .first()
          .evaluate(
            (e) =>
              (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(
                e,
              ).backgroundColor,
          ),
      ).to.equal(red);
      const unheard = await page.locator('#unheard li').allInnerTexts();
      expect(unheard).to.have.length(3);
      // Each says why nobody heard it: tries failing so far, every try failed, no one to tell.
      expect(unheard[0]).to.match(
        /^RETRYING DOWN: Shop API \(not delivered yet, 4 of 10 tries failed: connect ECONNREFUSED\)\s+Org \d+: its tries are failing, more to come/,
      );
      expect(unheard[1]).to.match(
        /^FAILED DOWN: Dead port \(not delivered: connect ECONNREFUSED\)\s+Org \d+: every try to deliver it failed/,
      );
      expect(unheard[2]).to.match(/^UNHEARD DOWN: Dead port\s+Org \d+ has no administrator to alert/);
      // Which of the server's heartbeats, by the id its alerts name.
      expect(await page.locator('#heartbeats li').innerText()).to.match(
        new RegExp(`MISSING Nightly cron for 40 min\\s+heartbeat ${Number(nightly)} · due `),
      );
      expect(await page.locator('#certificates li').innerText()).to.match(/EXPIRING Nightly cron/);
      const pro = await page.locator('#plans tr', { hasText: 'pro' }).allInnerTexts();
      // pro: up, down, paused (the first test's servers are pro and pending too).
      expect(pro[0].split(/\s+/).slice(0, 4)).to.deep.equal(['pro', '1', '2', '1']);

      // The worker figures as before.
      expect(await page.textContent('#status')).to.equal('critical');
      // 1 of 5 premium servers checked on time: the first test's two, and three planted here never checked.
      expect(await page.textContent('#sla-premium')).to.equal('20.00 %');
      expect(await page.textContent('#sla-free')).to.equal('100.00 %');
      for (const tier of ['premium', 'free']) {
        const line = await page.locator(`polyline.sla-${tier}`).boundingBox();
        expect(line, `${tier} line drawn`).to.not.equal(null);
        expect(line!.width, 'spans the hour of samples').to.be.above(50);
      }
      const chart = await page.locator('#sla-chart').boundingBox();
      expect(chart!.width).to.be.at.most(390);
      // Every grid label inside the chart (100 % and 99 % were drawn above it).
      const labels = await page.locator('#sla-chart text').evaluateAll((texts) =>
        texts.map((t) => {
          const box = t.getBoundingClientRect();
          return { text: t.textContent, top: box.top, bottom: box.bottom, width: box.width };
        }),
      );
      // Readable on the phone: the chart keeps its aspect (stretched, its labels were some 8 px tall, 5 wide).
      for (const l of labels) {
        expect(l.bottom - l.top, `${l.text} tall enough`).to.be.at.least(10);
        expect(l.width / (l.bottom - l.top), `${l.text} not squeezed`).to.be.above(1.5);
      }
      expect(chart!.height / chart!.width).to.be.closeTo(200 / 600, 0.02);
      // 100 % (left) and 90 % (left, below it) apart.
      expect(labels[2].top).to.be.at.least(labels[0].bottom);
      expect(labels.map((l) => l.text)).to.deep.equal(['100 %', '99 %', '90 %']);
      for (const l of labels)
        expect([l.text, l.top >= chart!.y - 0.5, l.bottom <= chart!.y + chart!.height + 0.5]).to.deep.equal([
          l.text,
          true,
          true,
        ]);
      expect(await page.evaluate<number>('document.documentElement.scrollWidth')).to.be.at.most(390);
      if (process.env.UPDATE_DASHBOARD_SCREENSHOT)
        await page.screenshot({ path: path.join(repoDocs, 'dashboard-phone.png'), fullPage: true });
      await page.goto(url.replace(API_KEY, 'wrong-key'));
      expect(await page.textContent('body')).to.contain('Invalid API key');
    } finally {
      await browser.close();
    }
  }).timeout(60_000);

  it('is healthy with every server checked on time, warning down to 90 %, critical below', async () => {
    const statusOf = async () => (await f.call('/worker-status').expect(200)).body;
    await f.engine.knex('monitor_servers').update({ last_checked_at: ago(10_000) });
    const all = await statusOf();
    expect(all.status).to.equal('healthy');
    expect(all.sla_compliance.premium.percentage).to.equal(100);
    expect(all.sla_compliance.free.percentage).to.equal(100);

    // 20 premium servers, 2 of them last checked longer than 75 s ago: 90 %.
    const pro = await organization(f.engine, { plan: 'pro' });
    const premium = all.sla_compliance.premium.total;
    for (let i = premium; i < 20; i++)
      await addServer(f.engine, pro, `https://late-${i}.test/`, { last_checked_at: ago(i < 18 ? 10_000 : 76_000) });
    const warning = await statusOf();
    expect(warning.sla_compliance.premium).to.deep.equal({ percentage: 90, checked: 18, total: 20 });
    expect(warning.status).to.equal('warning');

    await f.engine
      .knex('monitor_servers')
      .where({ endpoint: 'https://late-17.test/' })
      .update({ last_checked_at: ago(76_000), updated_at: ago(76_000) });
    const critical = await statusOf();
    expect(critical.sla_compliance.premium.percentage).to.equal(85);
    expect(critical.status).to.equal('critical');

    // Added a moment ago and not checked yet: not late, its first round is still to come. Added 10 minutes ago
    // and still not checked: late.
    await addServer(f.engine, pro, 'https://just-added.test/', { created_at: ago(5_000) });
    expect((await statusOf()).sla_compliance.premium).to.deep.equal({ percentage: 85, checked: 17, total: 20 });
    await addServer(f.engine, pro, 'https://forgotten.test/', { created_at: ago(10 * 60_000) });
    expect((await statusOf()).sla_compliance.premium).to.deep.equal({ percentage: 80.95, checked: 17, total: 21 });

    // Paused for an hour and resumed a moment ago: not late until its next round has had its time. Resumed
    // 10 minutes ago and still not checked: late.
    const resumed = await addServer(f.engine, pro, 'https://resumed.test/', {
      created_at: ago(2 * 3_600_000),
      last_checked_at: ago(3_600_000),
      state: 'paused',
      paused_at: ago(3_600_000),
    });
    await f.engine.contexts
      .get('server-monitor')!
      .container.resolve(ServersService)
      .update(pro, resumed, { paused: false });
    expect((await statusOf()).sla_compliance.premium).to.deep.equal({ percentage: 80.95, checked: 17, total: 21 });
    await f.engine
      .knex('monitor_servers')
      .where({ id: resumed })
      .update({ updated_at: ago(10 * 60_000) });
    expect((await statusOf()).sla_compliance.premium).to.deep.equal({ percentage: 77.27, checked: 17, total: 22 });
  });

  it('answers 500 with the detail when the queues cannot be read', async () => {
    const queue = f.engine.container.resolve<JobQueues>(SERVICES.Queues).get('servermonitor.check-free');
    const counts = queue.counts;
    queue.counts = () => Promise.reject(new Error('the queue is down'));
    try {
      expect((await f.call('/worker-status').expect(500)).body).to.deep.equal({
        success: false,
        message: 'Failed to read the worker status',
        error: 'the queue is down',
      });
      // The on-call page is needed most then: it answers, saying what it cannot read.
      const page = await f.call('/dashboard').expect(200);
      expect(page.text).to.contain('unknown (Redis not answering)');
    } finally {
      queue.counts = counts;
    }
  });
});
