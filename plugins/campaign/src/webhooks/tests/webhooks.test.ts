import { expect } from 'chai';
import request from 'supertest';
import { describeEachBackend, ManualClock, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { listOf, mailsOf, sendNow } from '../../shared/tests/sending-support';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { WebhookOutcomes } from '../outcomes';
import { webhookDeliveriesTask } from '../commands';
import { WebhookDispatcher } from '../dispatcher';
import { PARKED } from '../pending';
import { receiver, verified } from '../../shared/tests/webhook-receiver';

const options = (webhooks: Record<string, unknown>) => ({
  plugins: [{ id: 'campaign', package: '@switchboard/plugin-campaign', options: { webhooks } }],
});

describeEachBackend('campaign: outbound webhooks', (backend) => {
  let f: CampaignFixture;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  const clock = new ManualClock(new Date());
  before(async () => {
    // Now, not when the file was loaded: receivers check a delivery's timestamp against the real clock.
    clock.set(new Date());
    hooks = await receiver((path, n) => (path === '/flaky' && n === 1 ? 503 : path === '/gone' ? 410 : 204));
    f = await campaignFixture(
      backend(),
      {},
      clock,
      options({ disableAfterFailures: 3, disableAfterMs: 60_000, maxAttempts: 5, retryBaseMs: 10_000 }),
    );
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await hooks?.close();
  });
  const create = async (body: Record<string, unknown>) => (await f.api().post('/webhooks', body).expect(201)).body.data;
  const deliveries = async (id: number, query = '') =>
    (await f.api().get(`/webhooks/${id}/deliveries${query}`).expect(200)).body;
  const tick = () => webhookDeliveriesTask(f.engine.contexts.get('campaign')!).run(clock.now());

  it('keeps subscriptions: the secret shown once, unknown events and bad urls refused', async () => {
    const made = await create({ name: 'CRM', url: hooks.url('/crm'), events: ['sent', 'opened'] });
    expect(made).to.include({ name: 'CRM', url: hooks.url('/crm'), active: true, has_secret: true });
    expect(made.secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(made.events).to.deep.equal(['sent', 'opened']);
    const listed = (await f.api().get('/webhooks').expect(200)).body.data;
    expect(listed).to.have.length(1);
    expect(listed[0]).to.not.have.property('secret');
    const renamed = (
      await f
        .api()
        .put(`/webhooks/${made.id}`, { name: 'CRM 2', events: ['clicked'] })
        .expect(200)
    ).body.data;
    expect(renamed).to.include({ name: 'CRM 2' }).and.not.have.property('secret');
    expect(renamed.events).to.deep.equal(['clicked']);
    const resecret = await f.api().put(`/webhooks/${made.id}`, { secret: 'a-new-secret-of-ours' }).expect(200);
    expect(resecret.body.data.secret).to.equal('a-new-secret-of-ours');
    expect((await f.api().get(`/webhooks/${made.id}`).expect(200)).body.data).to.not.have.property('secret');
    const stored = await f.engine.knex('webhooks').where({ id: made.id }).first('secret');
    expect(stored.secret).to.not.contain('a-new-secret-of-ours');

    const unknown = await f.api().post('/webhooks', { name: 'x', url: hooks.url('/x'), events: ['sent', 'read'] });
    expect(unknown.status).to.equal(422);
    expect(unknown.body.error.code).to.equal('VALIDATION_ERROR');
    expect(unknown.body.error.details.field).to.match(/^events/);
    const ftp = await f.api().post('/webhooks', { name: 'x', url: 'ftp://files.example/x', events: ['sent'] });
    expect(ftp.status).to.equal(422);
    expect(ftp.body.error.details).to.deep.equal({ field: 'url', rule: 'pattern' });
    expect(ftp.body.error.message).to.contain('^https?://');
    // A secret that gives no key (its base64 decodes to nothing) would sign with an empty one: anyone could.
    // One after whsec_ that is not standard base64 signed with what Node's decoder kept, which no
    // receiver's library makes of it (base64url, a space, a character past the alphabet).
    for (const [secret, rule] of [
      ['whsec_!!!!!!!!!!!!!!!!!!', 'pattern'],
      ['whsec_dlQhBti-rP8DCdj9a0gV7CjUq4GB-t7R1CcVxZtIi9M', 'pattern'],
      ['whsec_ AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'pattern'],
      ['whsec_AAAAAAAAAAAAAAAAAAAAAAAA!!!!', 'pattern'],
      ['whsec_AAAAAAAAAAAA', 'minLength'],
    ])
      expect(
        (
          await f
            .api()
            .post('/webhooks', { name: 'x', url: hooks.url('/x'), events: ['sent'], secret })
            .expect(422)
        ).body.error.details,
        secret,
      ).to.deep.equal({ field: 'secret', rule });
    await f.api().put(`/webhooks/${made.id}`, { secret: 'whsec_!!!!!!!!!!!!!!!!!!' }).expect(422);
    const metadata = await f.api().post('/webhooks', { name: 'x', url: 'http://169.254.169.254/', events: ['sent'] });
    expect(metadata.status).to.equal(422);
    expect(metadata.body.error.message).to.contain('private or loopback address (169.254.169.254)');

    expect((await f.api().delete(`/webhooks/${made.id}`).expect(200)).body.message).to.equal(
      `Webhook ${made.id} deleted`,
    );
    await f.api().get(`/webhooks/${made.id}`).expect(404);
  });

  it('delivers signed events of subscriber changes once each, logged with status and latency', async () => {
    const hook = await create({
      name: 'Audience',
      url: hooks.url('/audience'),
      events: ['subscriber.created', 'subscriber.unsubscribed'],
    });
    const other = await create({ name: 'Other', url: hooks.url('/other'), events: ['message.sent'] });
    const ada = (await f.api().post('/subscribers', { email: 'ada@acme.test', confirmed: true }).expect(201)).body.data;
    await f
      .api()
      .post('/subscribers/batch', {
        subscribers: [{ email: 'bob@acme.test' }, { email: 'cy@acme.test' }],
        skip_confirmation: true,
      })
      .expect(200);
    await f.api().post(`/subscribers/${ada.id}/unsubscribe`, {}).expect(200);
    await waitFor(() => hooks.at('/audience').length === 4, 15_000);

    const bodies = hooks.at('/audience').map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => [b.event, b.data.email])).to.have.deep.members([
      ['subscriber.created', 'ada@acme.test'],
      ['subscriber.created', 'bob@acme.test'],
      ['subscriber.created', 'cy@acme.test'],
      ['subscriber.unsubscribed', 'ada@acme.test'],
    ]);
    for (const r of hooks.at('/audience')) {
      expect(verified(hook.secret, r)).to.equal(true);
      expect(verified(other.secret, r)).to.equal(false);
      const body = JSON.parse(r.body);
      expect(Object.keys(body)).to.deep.equal(['id', 'event', 'occurred_at', 'data']);
      expect(r.headers['webhook-id']).to.equal(body.id);
    }
    expect(hooks.at('/other')).to.have.length(0);

    // The receiver answered before each outcome is written: wait for the log to say so.
    await waitFor(async () => (await deliveries(hook.id, '?state=delivered')).pagination.total === 4, 15_000);
    const log = await deliveries(hook.id);
    expect(log.pagination.total).to.equal(4);
    for (const d of log.data) {
      expect(d).to.include({ state: 'delivered', attempts: 1, response_status: 204, last_error: null });
      expect(d.latency_ms).to.be.a('number').at.least(0);
    }
    expect((await deliveries(hook.id, '?state=pending')).pagination.total).to.equal(0);
  });

  it("signs with the secrets given so that the standard's library verifies them (whsec_, or plain text as UTF-8)", async () => {
    // Secrets given: a whsec_ one and plain text (its UTF-8 bytes, accents included), each verified by the
    // standard's library as docs/operations.md tells a receiver to.
    const given = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'clé secrète de nous, pas base64'];
    const mine = await Promise.all(
      given.map((secret, n) =>
        create({ name: `Given ${n}`, url: hooks.url(`/given-${n}`), events: ['subscriber.created'], secret }),
      ),
    );
    await f.api().post('/subscribers', { email: 'given-secrets@acme.test', confirmed: true }).expect(201);
    await waitFor(() => given.every((_, n) => hooks.at(`/given-${n}`).length === 1), 15_000);
    expect(given.map((secret, n) => verified(secret, hooks.at(`/given-${n}`)[0]))).to.deep.equal([true, true]);
    for (const hook of mine) await f.api().delete(`/webhooks/${hook.id}`).expect(200);
  });

  it('tries a 503 again after its backoff with the same webhook-id, and fails a 410 for good', async () => {
    const flaky = await create({ name: 'Flaky', url: hooks.url('/flaky'), events: ['subscriber.created'] });
    const gone = await create({ name: 'Gone', url: hooks.url('/gone'), events: ['subscriber.created'] });
    await f.api().post('/subscribers', { email: 'dee@acme.test' }).expect(201);
    await waitFor(() => hooks.at('/flaky').length === 1 && hooks.at('/gone').length === 1, 15_000);
    await waitFor(async () => (await deliveries(flaky.id)).data[0].attempts === 1, 5_000);
    const waiting = (await deliveries(flaky.id)).data[0];
    expect(waiting).to.include({ state: 'pending', attempts: 1, response_status: 503 });
    expect(waiting.last_error).to.equal('the receiver answered 503');
    const due = new Date(waiting.next_attempt_at).getTime() - clock.now().getTime();
    expect(due).to.be.within(8_000, 12_000);
    await waitFor(async () => (await deliveries(gone.id)).data[0]?.state === 'failed', 5_000);
    expect((await deliveries(gone.id)).data[0]).to.include({ attempts: 1, response_status: 410 });

    clock.advance(13_000);
    await tick();
    await waitFor(() => hooks.at('/flaky').length === 2, 15_000);
    const [first, second] = hooks.at('/flaky');
    expect(second.headers['webhook-id']).to.equal(first.headers['webhook-id']);
    expect(second.body).to.equal(first.body);
    expect(verified(flaky.secret, second)).to.equal(true);
    await waitFor(async () => (await deliveries(flaky.id)).data[0].state === 'delivered', 5_000);
    expect(hooks.at('/gone')).to.have.length(1);
    await f.api().delete(`/webhooks/${flaky.id}`).expect(200);
    await f.api().delete(`/webhooks/${gone.id}`).expect(200);
  });

  it('deactivates a subscription that keeps failing, with the reason; activating it sends what waited', async () => {
    let failing = true;
    const down = await receiver(() => (failing ? 500 : 200));
    try {
      const hook = await create({ name: 'Down', url: down.url('/'), events: ['subscriber.created'] });
      for (const n of [1, 2, 3]) {
        await f
          .api()
          .post('/subscribers', { email: `down${n}@acme.test` })
          .expect(201);
        await waitFor(() => down.received.length >= n, 15_000);
        await waitFor(async () => (await deliveries(hook.id)).data[0].attempts === 1, 5_000);
        clock.advance(20_000);
      }
      // Three failed tries within 40 s: still active (it must fail three times in a row *and* for a minute).
      expect((await f.api().get(`/webhooks/${hook.id}`).expect(200)).body.data.active).to.equal(true);
      clock.advance(30_000);
      await tick();
      await waitFor(async () => !(await f.api().get(`/webhooks/${hook.id}`)).body.data.active, 15_000);
      const off = (await f.api().get(`/webhooks/${hook.id}`).expect(200)).body.data;
      expect(off.disabled_reason).to.match(/^deactivated .*every try failed.*the receiver answered 500/);
      const tried = down.received.length;

      // Inactive: new events wait for nobody, pending ones wait.
      await f.api().post('/subscribers', { email: 'down4@acme.test' }).expect(201);
      clock.advance(60_000);
      await tick();
      expect(down.received.length).to.equal(tried);

      failing = false;
      const on = (await f.api().put(`/webhooks/${hook.id}`, { active: true }).expect(200)).body.data;
      expect(on).to.include({ active: true, disabled_reason: null });
      await waitFor(async () => (await deliveries(hook.id, '?state=pending')).pagination.total === 0, 15_000);
      const emails = new Set(down.received.slice(tried).map((r) => JSON.parse(r.body).data.email));
      expect([...emails].sort()).to.deep.equal(['down1@acme.test', 'down2@acme.test', 'down3@acme.test']);
      await f.api().delete(`/webhooks/${hook.id}`).expect(200);
    } finally {
      await down.close();
    }
  });

  it('keeps the run of failures when a client echoes active: true back with an edit', async () => {
    const hook = await create({ name: 'Echo', url: hooks.url('/gone'), events: ['subscriber.created'] });
    await f.api().post('/subscribers', { email: 'echo1@acme.test' }).expect(201);
    await f.api().post('/subscribers', { email: 'echo2@acme.test' }).expect(201);
    await waitFor(async () => (await deliveries(hook.id, '?state=failed')).pagination.total === 2, 15_000);
    const run = () => f.engine.knex('webhooks').where({ id: hook.id }).first('failures_in_row', 'failing_since');
    const before = await run();
    expect(Number(before.failures_in_row)).to.equal(2);
    await f.api().put(`/webhooks/${hook.id}`, { name: 'Echo 2', active: true }).expect(200);
    expect(await run()).to.deep.equal(before);
    await f.api().delete(`/webhooks/${hook.id}`).expect(200);
  });

  it('sends a signed test event and answers what the receiver said', async () => {
    const hook = await create({ name: 'T', url: hooks.url('/test'), events: ['sent'] });
    const answer = (await f.api().post(`/webhooks/${hook.id}/test`).expect(200)).body.data;
    expect(answer).to.include({ delivered: true, response_status: 204, error: null });
    const [got] = hooks.at('/test');
    expect(JSON.parse(got.body)).to.deep.include({ id: answer.event_id, event: 'webhook.test' });
    expect(verified(hook.secret, got)).to.equal(true);
    const gone = await f
      .api()
      .put(`/webhooks/${hook.id}`, { url: hooks.url('/gone') })
      .expect(200);
    expect(gone.body.data.url).to.equal(hooks.url('/gone'));
    const refused = (await f.api().post(`/webhooks/${hook.id}/test`).expect(200)).body.data;
    expect(refused).to.include({ delivered: false, response_status: 410 });
    expect((await deliveries(hook.id)).data.map((d: { state: string }) => d.state)).to.deep.equal([
      'failed',
      'delivered',
    ]);
    await f.api().post('/webhooks/999999/test').expect(404);
    await f.api().delete(`/webhooks/${hook.id}`).expect(200);
  });

  it("answers a test of a subscription deleted while it ran with the receiver's answer", async () => {
    const hook = await create({ name: 'Going', url: hooks.url('/test-going'), events: ['sent'] });
    const { post } = WebhookDispatcher.prototype;
    // The DELETE lands while the receiver answers.
    WebhookDispatcher.prototype.post = async function (this: WebhookDispatcher, ...args: Parameters<typeof post>) {
      const outcome = await post.apply(this, args);
      await f.api().delete(`/webhooks/${hook.id}`).expect(200);
      return outcome;
    };
    try {
      const answer = (await f.api().post(`/webhooks/${hook.id}/test`).expect(200)).body.data;
      expect(answer).to.include({ delivered: true, response_status: 204 });
    } finally {
      WebhookDispatcher.prototype.post = post;
    }
    await f.api().get(`/webhooks/${hook.id}`).expect(404);
  });

  it('activated again, sends at once what was parked, and never a delivery whose try is in flight', async () => {
    const hook = await create({ name: 'Parked', url: hooks.url('/parked'), events: ['sent'] });
    await f.api().put(`/webhooks/${hook.id}`, { active: false }).expect(200);
    const row = (eventId: string, nextAttemptAt: Date) => ({
      organization_id: f.tenant.organizationId,
      webhook_id: hook.id,
      event_id: eventId,
      event: 'sent',
      body: '{}',
      state: 'pending',
      attempts: 0,
      next_attempt_at: nextAttemptAt,
      created_at: clock.now(),
    });
    // One parked while inactive; one whose try is in flight (its due time moved past the try).
    const inFlight = new Date(clock.now().getTime() + 30_000);
    await f.engine.knex('webhook_deliveries').insert([row('parked-1', PARKED), row('flying-1', inFlight)]);
    await f.api().put(`/webhooks/${hook.id}`, { active: true }).expect(200);
    // The parked one goes out at once (the dispatcher may take it before any read of its row); the one
    // whose try is in flight keeps its due time and is not sent again.
    await waitFor(() => hooks.at('/parked').some((r) => r.headers['webhook-id'] === 'parked-1'), 15_000);
    const flying = await f.engine
      .knex('webhook_deliveries')
      .where({ webhook_id: hook.id, event_id: 'flying-1' })
      .first('next_attempt_at', 'attempts');
    expect([new Date(flying.next_attempt_at).getTime(), Number(flying.attempts)]).to.deep.equal([
      inFlight.getTime(),
      0,
    ]);
    expect(hooks.at('/parked').map((r) => r.headers['webhook-id'])).to.deep.equal(['parked-1']);
    await f.api().delete(`/webhooks/${hook.id}`).expect(200);
  });

  it('parks the retry of a try that was in flight when its subscription was deactivated: activation sends it at once', async () => {
    const hook = await create({ name: 'Late', url: hooks.url('/late'), events: ['sent'] });
    await f.engine.knex('webhook_deliveries').insert({
      organization_id: f.tenant.organizationId,
      webhook_id: hook.id,
      event_id: 'late-1',
      event: 'sent',
      body: '{}',
      state: 'pending',
      attempts: 0,
      // Its try in flight: the due time moved past the try.
      next_attempt_at: new Date(clock.now().getTime() + 30_000),
      created_at: clock.now(),
    });
    const [delivery] = await f.engine.knex('webhook_deliveries').where({ event_id: 'late-1' }).pluck('id');
    await f.api().put(`/webhooks/${hook.id}`, { active: false }).expect(200);
    // The try ends after the deactivation: a 503, to be tried again.
    await campaignContainer(f.engine)
      .resolve(WebhookOutcomes)
      .write([
        {
          id: Number(delivery),
          webhookId: hook.id,
          attempts: 1,
          outcome: { status: 503, error: null, latencyMs: 5 },
          at: clock.now(),
        },
      ]);
    const row = await f.engine.knex('webhook_deliveries').where({ id: delivery }).first('next_attempt_at', 'state');
    expect([new Date(row.next_attempt_at).getTime(), row.state]).to.deep.equal([PARKED.getTime(), 'pending']);
    await f.api().put(`/webhooks/${hook.id}`, { active: true }).expect(200);
    await waitFor(() => hooks.at('/late').some((r) => r.headers['webhook-id'] === 'late-1'), 15_000);
    await f.api().delete(`/webhooks/${hook.id}`).expect(200);
  });

  it('logs a delivery whose secret cannot be opened as a failed try, and delivers the others', async () => {
    const broken = await create({ name: 'Broken', url: hooks.url('/broken'), events: ['subscriber.created'] });
    const fine = await create({ name: 'Fine', url: hooks.url('/fine'), events: ['subscriber.created'] });
    // As after a change of APP_KEY: the sealed secret no longer opens.
    await f.engine.knex('webhooks').where({ id: broken.id }).update({ secret: 'v1.not-sealed-with-this-key' });
    await f.api().post('/subscribers', { email: 'key@acme.test' }).expect(201);
    await waitFor(() => hooks.at('/fine').length === 1, 15_000);
    await waitFor(async () => (await deliveries(broken.id)).data[0]?.attempts === 1, 5_000);
    const [d] = (await deliveries(broken.id)).data;
    expect(d).to.include({ state: 'pending', response_status: null });
    expect(d.last_error).to.match(/^the secret cannot be opened \(was APP_KEY changed\?\)/);
    expect(hooks.at('/broken')).to.have.length(0);
    await f.api().delete(`/webhooks/${broken.id}`).expect(200);
    await f.api().delete(`/webhooks/${fine.id}`).expect(200);
  });

  it('waits in the database: a delivery taken by a worker that died is tried again after its lease', async () => {
    const hook = await create({ name: 'Lease', url: hooks.url('/lease'), events: ['subscriber.created'] });
    // As a killed worker leaves it: taken (due after the lease), never answered.
    const [id] = await f.engine.knex('webhook_deliveries').insert({
      organization_id: f.tenant.organizationId,
      webhook_id: hook.id,
      event_id: 'evt_taken_by_a_dead_worker',
      event: 'subscriber.created',
      body: JSON.stringify({ id: 'evt_taken_by_a_dead_worker', event: 'subscriber.created', data: {} }),
      state: 'pending',
      attempts: 0,
      next_attempt_at: new Date(clock.now().getTime() + 25_000),
      created_at: clock.now(),
    });
    await tick();
    expect(hooks.at('/lease')).to.have.length(0);
    clock.advance(26_000);
    await tick();
    await waitFor(() => hooks.at('/lease').length === 1, 15_000);
    expect(hooks.at('/lease')[0].headers['webhook-id']).to.equal('evt_taken_by_a_dead_worker');
    await waitFor(
      async () => (await f.engine.knex('webhook_deliveries').where({ id }).first('state')).state === 'delivered',
      5_000,
    );
    await f.api().delete(`/webhooks/${hook.id}`).expect(200);
  });
  it('deletes finished deliveries once they are older than the log keeps them (30 days)', async () => {
    const finished = () => f.engine.knex('webhook_deliveries').whereNotNull('finished_at').count({ n: '*' }).first();
    expect(Number((await finished())!.n)).to.be.above(0);
    clock.advance(29 * 86_400_000);
    await tick();
    expect(Number((await finished())!.n)).to.be.above(0);
    clock.advance(2 * 86_400_000);
    await tick();
    expect(Number((await finished())!.n)).to.equal(0);
  });
});

describeEachBackend('campaign: outbound webhooks outside a developer machine', (backend) => {
  let hooks: Awaited<ReturnType<typeof receiver>>;
  before(async () => {
    hooks = await receiver();
  });
  after(async () => hooks?.close());

  it('refuses loopback at creation and at delivery in production, unless its range is allowed', async () => {
    const f = await campaignFixture(backend(), {
      APP_ENV: 'production',
      APP_KEY: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=',
    });
    try {
      f.engine.startWorkers();
      const literal = await f.api().post('/webhooks', { name: 'x', url: hooks.url('/x'), events: ['sent'] });
      expect(literal.status).to.equal(422);
      expect(literal.body.error.message).to.contain('private or loopback address (127.0.0.1)');
      const changelog = await f.api().post('/changelog/subscribe', { email: 'a@b.test', webhook_url: hooks.url('/') });
      expect(changelog.status).to.equal(422);

      // A name is resolved when the connection is made: localhost is refused then.
      const named = await f
        .api()
        .post('/webhooks', { name: 'n', url: hooks.url('/named', 'localhost'), events: ['subscriber.created'] })
        .expect(201);
      await f.api().post('/subscribers', { email: 'p@acme.test' }).expect(201);
      await waitFor(async () => {
        const [d] = (await f.api().get(`/webhooks/${named.body.data.id}/deliveries`)).body.data;
        return d?.attempts === 1;
      }, 15_000);
      const [d] = (await f.api().get(`/webhooks/${named.body.data.id}/deliveries`)).body.data;
      // Told and handled as a name that does not resolve (tried again later): the tenant learns nothing of
      // the name's address, not even that it has one.
      expect(d).to.include({ state: 'pending', response_status: null, last_error: 'getaddrinfo ENOTFOUND localhost' });
      const test = (await f.api().post(`/webhooks/${named.body.data.id}/test`).expect(200)).body.data;
      expect(test.delivered).to.equal(false);
      expect(test.error).to.equal('getaddrinfo ENOTFOUND localhost');
      expect(hooks.received).to.have.length(0);
    } finally {
      await f.close();
    }

    const allowed = await campaignFixture(backend(), {
      APP_ENV: 'production',
      APP_KEY: 'BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=',
      OUTBOUND_ALLOWED_RANGES: '127.0.0.0/8',
    });
    try {
      const hook = (
        await allowed
          .api()
          .post('/webhooks', { name: 'ok', url: hooks.url('/ok'), events: ['sent'] })
          .expect(201)
      ).body.data;
      expect((await allowed.api().post(`/webhooks/${hook.id}/test`).expect(200)).body.data.delivered).to.equal(true);
      expect(hooks.at('/ok')).to.have.length(1);
    } finally {
      await allowed.close();
    }
  });
});

describeEachBackend('campaign: outbound webhooks of a send', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  before(async () => {
    sink = await smtpSink();
    hooks = await receiver();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url, PUBLIC_URL: 'http://mail.test' });
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await sink?.close();
    await hooks?.close();
  });

  it('tells of each recipient sent, each open (the first marked), and the finished send', async () => {
    await f
      .api()
      .post('/webhooks', { name: 'Mail', url: hooks.url('/mail'), events: ['sent', 'opened', 'message.sent'] })
      .expect(201);
    const list = await listOf(f, ['ada@example.com', 'alan@example.com']);
    const id = await sendNow(f, [list], { content_html: '<p>Hi</p>', track_opens: true });
    const events = () => hooks.at('/mail').map((r) => JSON.parse(r.body));
    await waitFor(() => events().some((e) => e.event === 'message.sent'), 20_000);
    const sent = events().filter((e) => e.event === 'sent');
    expect(sent.map((e) => e.data.email).sort()).to.deep.equal(['ada@example.com', 'alan@example.com']);
    for (const e of sent) expect(e.data).to.include({ message_id: id });
    expect(events().find((e) => e.event === 'message.sent').data).to.include({
      message_id: id,
      recipients: 2,
      sent: 2,
      failed: 0,
    });

    const [mail] = mailsOf(sink, id).filter((m) => m.raw.includes('ada@example.com'));
    const html = (await mail.parse()).html as string;
    const pixel = new URL(/<img src="(http:\/\/mail\.test\/api\/campaign\/t\/o\?token=[^"]+)"/.exec(html)![1]);
    await request(f.server)
      .get(pixel.pathname + pixel.search)
      .expect(200);
    await request(f.server)
      .get(pixel.pathname + pixel.search)
      .expect(200);
    // Every open is told; only the mail's first carries `first: true` (docs/decisions.md, issue 24).
    await waitFor(() => events().filter((e) => e.event === 'opened').length >= 2, 15_000);
    const opened = events().filter((e) => e.event === 'opened');
    expect(opened).to.have.length(2);
    for (const e of opened) expect(e.data).to.include({ message_id: id });
    expect(opened.map((e) => e.data.first).sort()).to.deep.equal([false, true]);
  });
});
