import type { Server } from 'node:http';
import { expect } from 'chai';
import { apiClient, ApiClient, createTenant, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import { runJson } from '../src/cli';
import { PrivateStack } from './support/private-stack';
import { CliProcess } from './support/cli-process';
import { WebhookReceiver } from './support/webhook-receiver';

/** Confirmed subscriptions, every other one with a webhook url: 900 notices (600 mails, 300 POSTs). */
const CONFIRMED = 600;
/** Subscriptions whose address never confirmed: they are sent no notice. */
const UNCONFIRMED = 20;
const TITLE = 'Faults: the changelog notice';
/**
 * What a killed worker may have sent twice: the notices it was sending, 10 at a time (`AT_ONCE` in
 * changelog/notifier.ts; the notice job runs one at a time across processes). Each notice is marked sent
 * as soon as its receiver took it, so only those in flight at the kill can go out again.
 */
const IN_FLIGHT = 10;
/**
 * A killed worker's run keeps the notices' lock for 30 s (LOCK_MS), and the scheduler wakes the job
 * every minute while notices are due: the rest are out within that and the sending itself.
 */
const RECOVERY_BOUND_MS = 30_000 + 60_000 + 30_000;
/** The lease of the notices a run took (5 minutes): passed by the test instead of waited for. */
const LEASE_MS = 5 * 60_000;

/**
 * Issue 26: `campaign:changelog:publish` makes a notice per confirmed subscription (a mail, and a signed
 * POST where it has a webhook url); the `switchboard worker` sending them is SIGKILLed midway, and a new
 * worker (woken by a `switchboard scheduler`) sends the rest: every subscriber gets the notice, at most
 * the ones in flight twice; unconfirmed addresses get nothing. Private MariaDB and Redis, mail counted
 * at an in-test SMTP server, POSTs at a receiver on loopback.
 */
describe('faults: worker killed mid changelog notices [private mariadb+redis]', function () {
  let stack: PrivateStack;
  let sink: SmtpSink & { accepted: number };
  let receiver: WebhookReceiver;
  let server: Server;
  let api: ApiClient;
  let worker: CliProcess;

  before(async function () {
    this.timeout(180_000);
    sink = await smtpSink({ delayMs: 20 });
    receiver = await WebhookReceiver.start(20);
    stack = await PrivateStack.start({ plugins: [campaign], env: { SMTP_URL: sink.url, RATE_LIMIT_SCALE: '1000' } });
    server = stack.engine.http().listen(0);
    api = apiClient(server, '/api/campaign', await createTenant(stack.engine));
    for (let i = 0; i < CONFIRMED + UNCONFIRMED; i++) {
      const body = { email: `c${i}@changelog.test`, ...(i % 2 ? {} : { webhook_url: `${receiver.url}c${i}` }) };
      await api.post('/changelog/subscribe', body).expect(201);
    }
    // E-mail consent: the first ones confirmed their address (the link's POST, done here on the rows).
    const ids = await stack.engine.knex('changelog_subscriptions').orderBy('id').limit(CONFIRMED).pluck('address_id');
    await stack.engine.knex('changelog_addresses').whereIn('id', ids).update({ confirmed_at: new Date() });
    worker = stack.process(['worker']);
    await stack.process(['scheduler']).start();
  });
  after(async () => {
    server?.close();
    await stack?.dispose();
    await sink?.close();
    await receiver?.close();
  });

  /** Notice mails per address at the sink (the confirmation mails have another subject). */
  const mailed = () => {
    const counts = new Map<string, number>();
    for (const m of sink.mails)
      if (m.raw.includes(`Subject: ${TITLE}`)) for (const to of m.to) counts.set(to, (counts.get(to) ?? 0) + 1);
    return counts;
  };
  const sentOut = () => [...mailed().values()].reduce((a, b) => a + b, 0) + receiver.count();
  const states = async () =>
    Object.fromEntries(
      (
        await stack.engine
          .knex('changelog_notices')
          .groupBy('state')
          .select('state', stack.engine.knex.raw('count(*) as n'))
      ).map((r: { state: string; n: unknown }) => [r.state, Number(r.n)]),
    );

  it('a new worker sends the rest: every subscriber notified, at most the notices in flight twice', async () => {
    const subscriptions: Array<{ id: number; email: string; webhook_url: string | null; confirmed_at: unknown }> =
      await stack.engine
        .knex('changelog_subscriptions as s')
        .join('changelog_addresses as a', 'a.id', 's.address_id')
        .select('s.id', 's.email', 's.webhook_url', 'a.confirmed_at');
    const confirmed = subscriptions.filter((s) => s.confirmed_at !== null);
    const withUrl = confirmed.filter((s) => s.webhook_url);
    const notices = confirmed.length + withUrl.length;
    expect(confirmed.length).to.equal(CONFIRMED);

    await worker.start();
    const published = await runJson(
      ['campaign:changelog:publish', '--title', TITLE, '--body', 'What changed', '--key', 'faults-1'],
      stack.env(),
    );
    expect(published.published[0].notices).to.equal(notices);
    await waitFor(() => sentOut() >= notices / 3, 60_000, 10);
    await worker.kill();
    const killedAt = Date.now();
    const sentAtKill = sentOut();
    const statesAtKill = await states();
    expect(sentAtKill, 'the notices were under way').to.be.below(notices);

    // The dead run's notices are leased for 5 minutes: that time passed, as the test does not wait for it.
    await stack.engine
      .knex('changelog_notices')
      .where({ state: 'pending' })
      .update({ next_attempt_at: new Date(Date.now() - LEASE_MS) });
    await worker.start();
    await waitFor(async () => (await states()).sent === notices, RECOVERY_BOUND_MS + 60_000, 500);
    const doneMs = Date.now() - killedAt;

    const mails = mailed();
    const unconfirmedMailed = subscriptions.filter((s) => s.confirmed_at === null && mails.has(s.email)).length;
    // webhook-id is changelog-<entry>-<subscription>.
    const webhookCounts = new Map<number, number>();
    for (const [id, n] of receiver.taken) webhookCounts.set(Number(/-(\d+)$/.exec(id)![1]), n);
    const perNotice = [
      ...confirmed.map((s) => mails.get(s.email) ?? 0),
      ...withUrl.map((s) => webhookCounts.get(s.id) ?? 0),
    ];
    const lost = perNotice.filter((n) => n === 0).length;
    const twice = perNotice.filter((n) => n === 2).length;
    const more = perNotice.filter((n) => n > 2).length;
    console.log(
      `      figures ${JSON.stringify({
        notices,
        mails: CONFIRMED,
        webhooks: withUrl.length,
        at_kill: { sent_out: sentAtKill, states: statesAtKill },
        all_sent_after_kill_ms: doneMs,
        states: await states(),
        lost,
        duplicated: twice + more,
        in_flight_bound: IN_FLIGHT,
        unconfirmed_mailed: unconfirmedMailed,
      })}`,
    );

    expect(lost).to.equal(0);
    expect(more).to.equal(0);
    expect(twice).to.be.at.most(IN_FLIGHT);
    expect(unconfirmedMailed).to.equal(0);
    expect(receiver.taken.size).to.equal(withUrl.length);
    expect(doneMs).to.be.below(RECOVERY_BOUND_MS);
  }).timeout(RECOVERY_BOUND_MS + 180_000);
});
