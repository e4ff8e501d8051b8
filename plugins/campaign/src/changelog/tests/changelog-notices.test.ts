import { expect } from 'chai';
import { insertedId, toDate } from '@switchboard/core';
import request from 'supertest';
import { describeEachBackend, ManualClock, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { ChangelogPublisher } from '../publisher';
import { ChangelogNotifier } from '../notifier';
import { changelogNoticesTask } from '../commands';
import { receiver, verified } from '../../shared/tests/webhook-receiver';
import { addressHashOf } from '../address-hash';
import { ChangelogConsent } from '../consent';

describeEachBackend('campaign: changelog notices', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  const clock = new ManualClock(new Date());
  before(async () => {
    // Now, not when the file was loaded: receivers check a delivery's timestamp against the real clock.
    clock.set(new Date());
    sink = await smtpSink({ refuse: (address) => (address === 'nobody@acme.test' ? 550 : null) });
    hooks = await receiver((path, n) => (path === '/flaky' && n === 1 ? 503 : 204));
    f = await campaignFixture(backend(), { SMTP_URL: sink.url, PUBLIC_URL: 'http://api.test' }, clock);
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await sink?.close();
    await hooks?.close();
  });
  const CONFIRM_SUBJECT = 'Please confirm: API change notices';
  const confirmations = (to: string) => sink.to(to).filter((m) => m.raw.includes(`Subject: ${CONFIRM_SUBJECT}`));
  const notices = (to?: string) =>
    (to ? sink.to(to) : sink.mails).filter((m) => !m.raw.includes(`Subject: ${CONFIRM_SUBJECT}`));
  /** The confirmation link of the latest mail asking `to` (e-mail consent, issue 24). */
  const confirmLink = async (to: string, count: number) => {
    await waitFor(() => confirmations(to).length === count, 15_000);
    const text = String((await confirmations(to)[count - 1].parse()).text);
    const link = new URL(/(http:\/\/api\.test\/api\/campaign\/changelog\/confirm\?token=\S+)/.exec(text)![1]);
    return link.pathname + link.search;
  };
  /** Subscribes, and confirms through the mailed link as the address's owner would. */
  const subscribe = async (email: string, webhook_url?: string) => {
    const asked = confirmations(email).length;
    const answer = (await f.api().post('/changelog/subscribe', { email, ...(webhook_url ? { webhook_url } : {}) })).body
      .data;
    expect(answer.confirmed).to.equal(false);
    await request(f.server)
      .post(await confirmLink(email, asked + 1))
      .expect(200, /will receive notices of API changes/);
    return answer;
  };
  const notifier = () => campaignContainer(f.engine).resolve(ChangelogNotifier);

  it('mails every subscription once per entry and POSTs a signed notice to its url, retrying a failure', async () => {
    const ada = await subscribe('ada@acme.test');
    const bob = await subscribe('bob@acme.test', hooks.url('/bob'));
    const cy = await subscribe('cy@acme.test', hooks.url('/flaky'));
    expect(ada.signing_secret).to.equal(null);
    expect(bob.signing_secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // The same secret on every answer: a subscription made before notices existed gets it by subscribing again.
    const bobAgain = (
      await f.api().post('/changelog/subscribe', { email: 'bob@acme.test', webhook_url: hooks.url('/bob') })
    ).body.data;
    expect(bobAgain).to.include({ signing_secret: bob.signing_secret, confirmed: true });
    // An address that never confirms is sent nothing.
    await f.api().post('/changelog/subscribe', { email: 'stranger@elsewhere.test' }).expect(201);
    await confirmLink('stranger@elsewhere.test', 1);

    const publisher = campaignContainer(f.engine).resolve(ChangelogPublisher);
    const first = await publisher.publish([{ key: 'v1.10', title: 'Analytics are live', body: 'GET /analytics/*.' }]);
    expect(first).to.deep.equal({
      published: [{ key: 'v1.10', title: 'Analytics are live', notices: 5 }],
      skipped: [],
    });
    await waitFor(() => notices().length === 3 && hooks.received.length === 2, 15_000);
    expect(notices('stranger@elsewhere.test')).to.have.length(0);
    for (const to of ['ada@acme.test', 'bob@acme.test', 'cy@acme.test']) {
      const [mail] = notices(to);
      const parsed = await mail.parse();
      expect(parsed.subject).to.equal('Analytics are live');
      expect(parsed.text).to.contain('GET /analytics/*.');
      expect(mail.raw).to.match(
        /^List-Unsubscribe: <http:\/\/api\.test\/api\/campaign\/changelog\/unsubscribe\?token=/m,
      );
    }
    const toBob = hooks.received.find((r) => r.path === '/bob')!;
    expect(verified(bob.signing_secret, toBob)).to.equal(true);
    expect(verified(cy.signing_secret, toBob)).to.equal(false);
    expect(JSON.parse(toBob.body)).to.deep.include({ event: 'changelog.published' });
    expect(JSON.parse(toBob.body).data).to.include({ key: 'v1.10', title: 'Analytics are live' });

    // The flaky receiver answered 503: tried again after its backoff, with the same webhook-id.
    const flaky = () => hooks.received.filter((r) => r.path === '/flaky');
    expect(flaky()).to.have.length(1);
    expect(await f.engine.knex('changelog_notices').where({ state: 'pending' }).count({ n: '*' })).to.deep.equal([
      { n: 1 },
    ]);
    expect(await notifier().due()).to.equal(false);
    clock.advance(2 * 60_000);
    expect(await notifier().due()).to.equal(true);
    // The minute's task wakes the job (as after a Redis restarted empty).
    await changelogNoticesTask(f.engine.contexts.get('campaign')!).run(clock.now());
    await waitFor(() => flaky().length === 2, 15_000);
    expect(flaky()[1].headers['webhook-id']).to.equal(flaky()[0].headers['webhook-id']);
    expect(verified(cy.signing_secret, flaky()[1])).to.equal(true);
    await waitFor(
      async () => !(await f.engine.knex('changelog_notices').where({ state: 'pending' }).first('id')),
      5_000,
    );
    const states = await f.engine.knex('changelog_notices').select('state', 'attempts');
    expect(states.map((s: { state: string }) => s.state)).to.deep.equal(Array(5).fill('sent'));

    // Published again: nothing new to anyone.
    const again = await publisher.publish([{ key: 'v1.10', title: 'Analytics are live', body: 'GET /analytics/*.' }]);
    expect(again).to.deep.equal({ published: [], skipped: ['v1.10'] });
    expect(await f.engine.knex('changelog_notices').count({ n: '*' })).to.deep.equal([{ n: 5 }]);
  });

  it("stops an address's notices through its mail's unsubscribe link; subscribing again needs the address to confirm", async () => {
    const [mail] = notices('ada@acme.test');
    const link = new URL(/^List-Unsubscribe: <([^>]+)>/m.exec(mail.raw)![1]);
    const page = await request(f.server)
      .get(link.pathname + link.search)
      .expect(200);
    expect(page.text).to.contain('Stop sending changelog notices to ada@acme.test?');
    const done = await request(f.server)
      .post(link.pathname + link.search)
      .expect(200);
    expect(done.text).to.contain('ada@acme.test receives no more changelog notices.');
    await request(f.server).get(`${link.pathname}?token=1.abc`).expect(404);

    const before = notices().length;
    const publish = (title: string) =>
      campaignContainer(f.engine)
        .resolve(ChangelogPublisher)
        .publish([{ title, body: `${title}.` }]);
    await publish('Webhooks');
    await waitFor(() => notices().length === before + 2, 15_000);
    expect(notices('ada@acme.test')).to.have.length(1);

    // An organization subscribing the address again does not undo its own unsubscribe: it is asked again.
    const asked = confirmations('ada@acme.test').length;
    const again = (await f.api().post('/changelog/subscribe', { email: 'ada@acme.test' }).expect(200)).body.data;
    expect(again.confirmed).to.equal(false);
    const confirm = await confirmLink('ada@acme.test', asked + 1);
    await publish('Still nothing for Ada');
    await waitFor(() => notices().length === before + 4, 15_000);
    expect(notices('ada@acme.test')).to.have.length(1);
    // Opening the link shows a page and changes nothing; its form's POST confirms.
    await request(f.server)
      .get(confirm)
      .expect(200, /Send notices of API changes to ada@acme.test\?/);
    await request(f.server).post(confirm).expect(200);
    await publish('Changelog');
    await waitFor(() => notices('ada@acme.test').length === 2, 15_000);

    // A stranger subscribed again and again is asked once a day at most.
    const askedAt = async () =>
      toDate(
        (
          await f.engine
            .knex('changelog_addresses as a')
            .join('changelog_subscriptions as s', 's.address_id', 'a.id')
            .where('s.email', 'stranger@elsewhere.test')
            .first('a.asked_at')
        ).asked_at,
      )?.getTime();
    const firstAsked = await askedAt();
    expect(firstAsked).to.be.a('number');
    await f.api().post('/changelog/subscribe', { email: 'stranger@elsewhere.test' }).expect(200);
    expect(await askedAt()).to.equal(firstAsked);
    clock.advance(25 * 3_600_000);
    await f.api().post('/changelog/subscribe', { email: 'stranger@elsewhere.test' }).expect(200);
    expect(await askedAt()).to.be.above(firstAsked!);
    await confirmLink('stranger@elsewhere.test', 2);
  });

  it('asks an address once whatever its urls and case; its confirmation, its one mail an entry and its unsubscribe cover them all', async () => {
    const subscribeDee = async (email: string, path?: string) =>
      (await f.api().post('/changelog/subscribe', { email, ...(path ? { webhook_url: hooks.url(path) } : {}) })).body
        .data;
    // Each url asked the address again until session 36, and its unsubscribe link stopped one url only.
    const dee = [
      await subscribeDee('Dee@acme.test', '/dee-1'),
      await subscribeDee('dee@acme.test', '/dee-2'),
      await subscribeDee('dee@acme.test'),
    ];
    expect(dee.map((d) => d.confirmed)).to.deep.equal([false, false, false]);
    const addressIds = await f.engine
      .knex('changelog_subscriptions')
      .whereIn(
        'id',
        dee.map((d) => d.id),
      )
      .pluck('address_id');
    expect(new Set(addressIds).size).to.equal(1);
    const confirm = await confirmLink('Dee@acme.test', 1);
    // Another address (a letter more) is one of its own.
    const other = await subscribeDee('dee2@acme.test', '/dee-other');
    await confirmLink('dee2@acme.test', 1);
    await request(f.server).post(confirm).expect(200);
    expect(await subscribeDee('DEE@acme.test', '/dee-3')).to.include({ confirmed: true });
    expect(confirmations('dee@acme.test')).to.have.length(0);
    expect(confirmations('DEE@acme.test')).to.have.length(0);
    expect(confirmations('Dee@acme.test')).to.have.length(1);
    expect(other.confirmed).to.equal(false);

    const publish = (title: string) =>
      campaignContainer(f.engine)
        .resolve(ChangelogPublisher)
        .publish([{ title, body: `${title}.` }]);
    const deeMails = () => [...notices('Dee@acme.test'), ...notices('dee@acme.test'), ...notices('DEE@acme.test')];
    const deeHooks = () => hooks.received.filter((r) => r.path.startsWith('/dee'));
    await publish('One mail for Dee');
    await waitFor(() => deeHooks().length === 3 && deeMails().length === 1, 15_000);
    expect(notices('Dee@acme.test')).to.have.length(1);
    expect(
      deeHooks()
        .map((r) => r.path)
        .sort(),
    ).to.deep.equal(['/dee-1', '/dee-2', '/dee-3']);

    // Its unsubscribe link stops the address: every url of it, and its mail.
    const link = new URL(/^List-Unsubscribe: <([^>]+)>/m.exec(notices('Dee@acme.test')[0].raw)![1]);
    await request(f.server)
      .post(link.pathname + link.search)
      .expect(200, /Dee@acme\.test receives no more changelog notices/);
    const published = await publish('Nothing for Dee');
    const entry = await f.engine.knex('changelog_entries').where({ title: 'Nothing for Dee' }).first('id');
    const toDee = await f.engine
      .knex('changelog_notices')
      .where({ entry_id: entry.id })
      .whereIn(
        'subscription_id',
        dee.map((d) => d.id),
      )
      .count({ n: '*' });
    expect(Number(toDee[0].n)).to.equal(0);
    expect(published.published[0].notices).to.be.above(0);
    await waitFor(
      async () =>
        !(await f.engine.knex('changelog_notices').where({ entry_id: entry.id, state: 'pending' }).first('id')),
      15_000,
    );
    expect(deeHooks()).to.have.length(3);
    expect(deeMails()).to.have.length(1);
    expect(hooks.received.filter((r) => r.path === '/dee-other')).to.have.length(0);
  });

  it('queues a confirmation mail again when its job was lost, for a day after the ask', async () => {
    const lost = (await f.api().post('/changelog/subscribe', { email: 'lost@acme.test' }).expect(201)).body.data;
    await confirmLink('lost@acme.test', 1);
    const ask = () =>
      f.engine.knex('changelog_addresses').where({ ask_subscription_id: lost.id }).first('ask_due_at', 'asked_at');
    // Written: the sweep leaves it.
    await waitFor(async () => (await ask()).ask_due_at === null, 5_000);
    const sweep = () => changelogNoticesTask(f.engine.contexts.get('campaign')!).run(clock.now());

    // A job run again after its mail was written (stalled, or the sweep's) sends nothing.
    const consent = campaignContainer(f.engine).resolve(ChangelogConsent);
    await consent.send(lost.id);
    expect(confirmations('lost@acme.test')).to.have.length(1);
    // A job 1.17 queued before the upgrade, for a subscription it wrote (no address, its own asked_at): sent.
    const old = insertedId(
      await f.engine.knex('changelog_subscriptions').insert({
        organization_id: f.tenant.organizationId,
        email: 'old-job@acme.test',
        webhook_url: null,
        webhook_url_hash: '',
        created_at: clock.now(),
        asked_at: clock.now(),
      }),
    );
    await consent.send(old);
    expect(confirmations('old-job@acme.test')).to.have.length(1);

    // Its job lost (Redis emptied, a process stopped before queuing it): the row still says it is due.
    await f.engine
      .knex('changelog_addresses')
      .where({ ask_subscription_id: lost.id })
      .update({ ask_due_at: new Date(clock.now().getTime() - 1) });
    await sweep();
    await confirmLink('lost@acme.test', 2);
    await waitFor(async () => (await ask()).ask_due_at === null, 5_000);

    // Asked over a day ago: given up (the next subscribe asks again).
    await f.engine
      .knex('changelog_addresses')
      .where({ ask_subscription_id: lost.id })
      .update({
        ask_due_at: new Date(clock.now().getTime() - 1),
        asked_at: new Date(clock.now().getTime() - 25 * 3_600_000),
      });
    await sweep();
    expect((await ask()).ask_due_at).to.equal(null);
    expect(confirmations('lost@acme.test')).to.have.length(2);

    // A mailbox the relay refuses for good: the ask ends at once (the sweep asked it every 3 minutes for a day).
    const nobody = (await f.api().post('/changelog/subscribe', { email: 'nobody@acme.test' }).expect(201)).body.data;
    await waitFor(
      async () =>
        (await f.engine.knex('changelog_addresses').where({ ask_subscription_id: nobody.id }).first('ask_due_at'))
          .ask_due_at === null,
      15_000,
    );
    expect(confirmations('nobody@acme.test')).to.have.length(0);
  });

  it('publishes to more subscriptions than one statement of SQLite takes (past 500 no entry could be published)', async () => {
    const organizationId = f.tenant.organizationId;
    const now = new Date();
    const emails = Array.from({ length: 700 }, (_, i) => `many-${i}@acme.test`);
    for (let i = 0; i < emails.length; i += 100)
      await f.engine.knex('changelog_addresses').insert(
        emails.slice(i, i + 100).map((email) => ({
          organization_id: organizationId,
          address_hash: addressHashOf(email),
          confirmed_at: now,
        })),
      );
    const addressIds = new Map<string, number>(
      (
        await f.engine
          .knex('changelog_addresses')
          .where({ organization_id: organizationId })
          .select('id', 'address_hash')
      ).map((a: { id: number; address_hash: string }) => [a.address_hash, Number(a.id)]),
    );
    const rows = emails.map((email, i) => ({
      organization_id: organizationId,
      email,
      webhook_url: i % 7 === 0 ? `http://127.0.0.1:9/many/${i}` : null,
      webhook_url_hash: i % 7 === 0 ? `many-${i}` : '',
      created_at: now,
      address_id: addressIds.get(addressHashOf(email)),
    }));
    for (let i = 0; i < rows.length; i += 100)
      await f.engine.knex('changelog_subscriptions').insert(rows.slice(i, i + 100));
    const publisher = campaignContainer(f.engine).resolve(ChangelogPublisher);
    const published = await publisher.publish([{ key: 'many-1', title: 'Many', body: 'To everyone.' }]);
    const entry = await f.engine.knex('changelog_entries').where({ entry_key: 'many-1' }).first('id');
    const noticeRows = await f.engine.knex('changelog_notices').where({ entry_id: entry.id }).count({ n: '*' });
    // 700 mails and 100 webhook POSTs, besides the earlier tests' subscriptions.
    expect(Number(noticeRows[0].n)).to.be.at.least(800);
    expect(published.published.map((p) => p.notices)).to.deep.equal([Number(noticeRows[0].n)]);
  }).timeout(60_000);
});
