import crypto from 'node:crypto';
import { expect } from 'chai';
import request from 'supertest';
import { SecretBox, SERVICES } from '@switchboard/core';
import { createTenant, describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { snsTestSigner, TEST_CERT_URL } from '@switchboard/provider-d/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { REMOTE_TEXT } from '../remote-text';
import { listOf, mailsOf, sendNow } from '../../shared/tests/sending-support';
import { signedHeaders as signProviderA } from '@switchboard/provider-a/testing';
import { SubscriberWriter } from '../../audience/subscribers';

describeEachBackend('campaign: inbound provider webhooks', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let message: number;
  let ada: number;
  let alan: number;
  before(async () => {
    // A relay that names the id it gave each mail, as SendGrid, Postmark and SES do.
    sink = await smtpSink({ answer: () => `Ok: queued as relay-${crypto.randomUUID()}` });
    f = await campaignFixture(backend(), { SMTP_URL: sink.url, PUBLIC_URL: 'http://hooks.test' });
    f.engine.startWorkers();
    const list = await listOf(f, ['ada@example.com', 'alan@example.com']);
    message = await sendNow(f, [list]);
    await waitFor(
      async () => (await f.api().get(`/messages/${message}`).expect(200)).body.data.status === 'sent',
      15_000,
    );
    const ids = (await f.api().get('/subscribers').expect(200)).body.data.map((s: { id: number }) => s.id);
    [ada, alan] = ids;
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  const counters = async () =>
    (await f.engine
      .knex('messages')
      .where({ id: message })
      .first(
        'count_delivered',
        'count_read',
        'count_clicked',
        'count_bounced',
        'count_stop',
        'count_complained',
        'unique_opened',
        'unique_clicked',
      )) as Record<string, number>;
  const events = async () => Number((await f.engine.knex('inbound_events').count({ n: '*' }))[0].n);
  const post = (path: string, body: string, headers: Record<string, string>) =>
    request(f.server)
      .post(`/api/campaign${path}`)
      .set({ 'content-type': 'application/json', ...headers })
      .send(body);
  /** An endpoint made through the API (of `tenant`, else the fixture's), as it answered. */
  const createEndpoint = async (body: Record<string, unknown>, tenant?: Parameters<CampaignFixture['api']>[0]) =>
    (await f.api(tenant).post('/inbound-webhooks', body).expect(201)).body.data;

  it('manages endpoints: the secret shown once, sealed at rest, the url to give the provider', async () => {
    const created = (await f.api().post('/inbound-webhooks', { provider: 'provider_a', name: 'SendGrid' }).expect(201))
      .body.data;
    expect(created).to.include({ provider: 'provider_a', name: 'SendGrid', has_secret: true, is_active: true });
    expect(created.url).to.equal(`http://hooks.test/api/campaign/webhook/provider_a?endpoint=${created.id}`);
    expect(created.secret).to.be.a('string').with.length.above(20);
    const stored = await f.engine.knex('inbound_webhooks').where({ id: created.id }).first('secret');
    expect(stored.secret).to.match(/^v1:/).and.not.contain(created.secret);
    const read = (await f.api().get(`/inbound-webhooks/${created.id}`).expect(200)).body.data;
    expect(read).to.not.have.property('secret');
    expect((await f.api().get('/inbound-webhooks').expect(200)).body.data).to.have.length(1);
    const renamed = (
      await f.api().put(`/inbound-webhooks/${created.id}`, { name: 'SG', secret: 'a-new-secret' }).expect(200)
    ).body.data;
    expect(renamed).to.include({ name: 'SG', secret: 'a-new-secret' });
    const postmark = (await f.api().post('/inbound-webhooks', { provider: 'provider_c', name: 'PM' }).expect(201)).body
      .data;
    expect(postmark.secret).to.match(/^switchboard:/);
    await f.api().post('/inbound-webhooks', { provider: 'provider_z', name: 'Z' }).expect(422);
    const other = await createTenant(f.engine);
    await f.api(other).get(`/inbound-webhooks/${created.id}`).expect(404);
    await f.api().delete(`/inbound-webhooks/${postmark.id}`).expect(200);
    await f.api().delete(`/inbound-webhooks/${created.id}`).expect(200);
  });

  it('records a signed batch once, counts it on the message and moves the subscribers', async () => {
    const endpoint = await createEndpoint({ provider: 'provider_a', name: 'SG', secret: 'sg-secret-1' });
    const ids = (subscriber: number) => ({
      campaign_message_id: String(message),
      campaign_subscriber_id: String(subscriber),
    });
    const at = Math.floor(Date.now() / 1000);
    const batch = JSON.stringify([
      { event: 'delivered', email: 'ada@example.com', timestamp: at, sg_event_id: 'd1', ...ids(ada) },
      { event: 'open', email: 'ada@example.com', timestamp: at, sg_event_id: 'o1', ...ids(ada) },
      { event: 'open', email: 'ada@example.com', timestamp: at, sg_event_id: 'o2', ...ids(ada) },
      {
        event: 'click',
        email: 'ada@example.com',
        timestamp: at,
        sg_event_id: 'c1',
        url: 'https://a.example',
        ...ids(ada),
      },
      { event: 'bounce', type: 'bounce', email: 'alan@example.com', timestamp: at, sg_event_id: 'b1', ...ids(alan) },
      { event: 'deferred', email: 'alan@example.com', timestamp: at, sg_event_id: 'x1', ...ids(alan) },
    ]);
    const before = await counters();
    const path = `/webhook/provider_a?endpoint=${endpoint.id}`;
    const res = await post(path, batch, signProviderA('sg-secret-1', batch)).expect(200);
    expect(res.body.data).to.deep.equal({ received: 5, recorded: 5 });
    const after = await counters();
    expect(Number(after.count_delivered) - Number(before.count_delivered)).to.equal(1);
    const added = (column: string) => Number(after[column]) - Number(before[column]);
    expect(added('count_read'), 'every open counts').to.equal(2);
    expect(added('unique_opened'), 'the mail opened').to.equal(1);
    expect(added('count_clicked')).to.equal(1);
    expect(added('unique_clicked')).to.equal(1);
    expect(Number(after.count_bounced) - Number(before.count_bounced)).to.equal(1);
    expect((await f.api().get(`/subscribers/${alan}`).expect(200)).body.data.status).to.equal('bounced');
    expect((await f.api().get(`/subscribers/${ada}`).expect(200)).body.data).to.include({
      status: 'active',
      messages_opened: 1,
      messages_clicked: 1,
    });
    const stored = await f.engine.knex('inbound_events').where({ provider_event_id: 'click:c1' }).first();
    expect(stored).to.include({
      event_type: 'clicked',
      webhook_endpoint_id: endpoint.id,
      recipient: 'ada@example.com',
    });
    expect(Number(stored.message_id)).to.equal(message);
    expect(JSON.parse(stored.payload)).to.include({ url: 'https://a.example' });

    // The provider retries the same batch (signed anew): nothing changes.
    const again = await post(path, batch, signProviderA('sg-secret-1', batch)).expect(200);
    expect(again.body.data).to.deep.equal({ received: 5, recorded: 0 });
    expect(await counters()).to.deep.equal(after);
    // Without ?endpoint: the provider's only active endpoint.
    await post('/webhook/provider_a', batch, signProviderA('sg-secret-1', batch)).expect(200);

    // Statistics: the summary is the counters GET /messages/{id} shows too; the timeline counts the same events.
    const stats = (await f.api().get(`/messages/${message}/stats`).expect(200)).body.data;
    const shown = (await f.api().get(`/messages/${message}`).expect(200)).body.data;
    expect(stats.summary).to.deep.equal({
      sent: 2,
      delivered: 1,
      opened: 2,
      clicked: 1,
      unsubscribed: 0,
      bounced: 1,
      complained: 0,
      unique_opened: 1,
      unique_clicked: 1,
    });
    expect(shown.stats).to.deep.include({
      sent: 2,
      opened: 2,
      clicked: 1,
      unsubscribed: 0,
      unique_opened: 1,
      unique_clicked: 1,
    });
    expect(stats.rates).to.include({ delivery_rate: 50, open_rate: 50, bounce_rate: 50, complaint_rate: 0 });
    const { unique_opened: _o, unique_clicked: _c, ...events } = stats.summary;
    for (const period of ['hourly', 'daily']) {
      const entries: Array<Record<string, number>> = stats.timeline[period];
      const sums = Object.fromEntries(Object.keys(events).map((e) => [e, entries.reduce((n, t) => n + t[e], 0)]));
      expect(sums, `${period} sums`).to.deep.equal(events);
    }
    // The provider's events in the hour and day they occurred (our sends in theirs).
    const hour = new Date(Math.floor(at / 3600) * 3600_000).toISOString();
    const day = `${hour.slice(0, 10)}T00:00:00.000Z`;
    const theirs = { delivered: 1, opened: 2, clicked: 1, bounced: 1, complained: 0, unsubscribed: 0 };
    expect(stats.timeline.hourly.find((t: any) => t.period_start === hour)).to.include(theirs);
    expect(stats.timeline.daily.find((t: any) => t.period_start === day)).to.include(theirs);
    await f
      .api(await createTenant(f.engine))
      .get(`/messages/${message}/stats`)
      .expect(404);
  });

  it('counts a batch once when a provider delivers it several times at once', async () => {
    const endpoint = await createEndpoint({ provider: 'provider_a', name: 'Racing', secret: 'race-secret' });
    const at = Math.floor(Date.now() / 1000);
    const batch = JSON.stringify(
      Array.from({ length: 20 }, (_, i) => ({
        event: 'delivered',
        email: 'ada@example.com',
        timestamp: at,
        sg_event_id: `race-${i}`,
        campaign_message_id: String(message),
        campaign_subscriber_id: String(ada),
      })),
    );
    const before = Number((await counters()).count_delivered);
    const path = `/webhook/provider_a?endpoint=${endpoint.id}`;
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => post(path, batch, signProviderA('race-secret', batch)).expect(200)),
    );
    expect(answers.reduce((sum, res) => sum + Number(res.body.data.recorded), 0)).to.equal(20);
    expect(Number((await counters()).count_delivered)).to.equal(before + 20);
    await f.api().delete(`/inbound-webhooks/${endpoint.id}`).expect(200);
  });

  it('records a batch of a hundred once, then only the new half of one half resent, then 250 more, dates and payloads as sent', async () => {
    const endpoint = await createEndpoint({ provider: 'provider_a', name: 'Hundreds', secret: 'hundred-secret' });
    const at = Math.floor(Date.UTC(2026, 10, 20, 23, 59, 58) / 1000);
    const eventsOf = (from: number, length = 100) =>
      Array.from({ length }, (_, i) => ({
        event: 'delivered',
        email: 'alan@example.com',
        timestamp: at,
        sg_event_id: `hundred-${from + i}`,
        note: `it's "${from + i}" \\ \u00e9 \u{1F642}`,
        campaign_message_id: String(message),
        campaign_subscriber_id: String(alan),
      }));
    const path = `/webhook/provider_a?endpoint=${endpoint.id}`;
    const send = (events: unknown[]) => {
      const body = JSON.stringify(events);
      return post(path, body, signProviderA('hundred-secret', body)).expect(200);
    };
    const before = Number((await counters()).count_delivered);
    expect((await send(eventsOf(0))).body.data).to.deep.equal({ received: 100, recorded: 100 });
    // Half of them again with fifty new ones: only the new ones are recorded and counted.
    expect((await send(eventsOf(50))).body.data).to.deep.equal({ received: 100, recorded: 50 });
    expect(Number((await counters()).count_delivered)).to.equal(before + 150);
    expect((await send(eventsOf(150, 250))).body.data).to.deep.equal({ received: 250, recorded: 250 });
    expect(Number((await counters()).count_delivered)).to.equal(before + 400);
    for (const n of [7, 390]) {
      const row = await f.engine
        .knex('inbound_events')
        .where({ provider: 'provider_a', provider_event_id: `delivered:hundred-${n}` })
        .first('event_at', 'payload', 'message_id', 'subscriber_id');
      expect(new Date(row.event_at).toISOString()).to.equal('2026-11-20T23:59:58.000Z');
      expect(JSON.parse(row.payload).note).to.equal(`it's "${n}" \\ \u00e9 \u{1F642}`);
      expect([Number(row.message_id), Number(row.subscriber_id)]).to.deep.equal([message, alan]);
    }
    await f.api().delete(`/inbound-webhooks/${endpoint.id}`).expect(200);
  });

  it('keeps event ids apart that differ in case, accents, a trailing space or past 191 characters; a resend counts nothing', async () => {
    const endpoint = await createEndpoint({ provider: 'provider_a', name: 'Long ids', secret: 'long-secret' });
    const start = 'x'.repeat(200);
    // MariaDB's default collation took the second of each pair for a retry of the first (campaign 1.17).
    const ids = [`${start}a`, `${start}b`, 'Case-Id', 'case-id', 'café-1', 'cafe-1', 'pad-1', 'pad-1 '];
    const body = JSON.stringify(
      ids.map((id) => ({
        event: 'delivered',
        email: 'alan@example.com',
        timestamp: Math.floor(Date.now() / 1000),
        sg_event_id: id,
        campaign_message_id: String(message),
        campaign_subscriber_id: String(alan),
      })),
    );
    const path = `/webhook/provider_a?endpoint=${endpoint.id}`;
    const before = Number((await counters()).count_delivered);
    expect((await post(path, body, signProviderA('long-secret', body)).expect(200)).body.data).to.deep.equal({
      received: 8,
      recorded: 8,
    });
    expect((await post(path, body, signProviderA('long-secret', body)).expect(200)).body.data).to.deep.equal({
      received: 8,
      recorded: 0,
    });
    expect(Number((await counters()).count_delivered)).to.equal(before + 8);
    await f.api().delete(`/inbound-webhooks/${endpoint.id}`).expect(200);
  });

  it('refuses with 401 the requests of an endpoint whose secret opens to nothing (sealed under another APP_KEY)', async () => {
    const endpoint = await createEndpoint({ provider: 'provider_a', name: 'Old key', secret: 'old-key-secret' });
    await f.engine
      .knex('inbound_webhooks')
      .where({ id: endpoint.id })
      .update({ secret: 'v1.sealed-under-another-key' });
    const body = '[]';
    const answer = await post(
      `/webhook/provider_a?endpoint=${endpoint.id}`,
      body,
      signProviderA('old-key-secret', body),
    );
    expect([answer.status, answer.body.error?.code]).to.deep.equal([401, 'SIGNATURE_INVALID']);
    await f.api().delete(`/inbound-webhooks/${endpoint.id}`).expect(200);
  });

  it('stores an event time no database holds (year 33,658, before year 1000) as the time it was received', async () => {
    const endpoint = await createEndpoint({ provider: 'provider_a', name: 'Far times', secret: 'far-secret' });
    // A batch of 100, two of them with such times.
    const times: Record<number, number> = { 3: 1e12, 4: -1e11 };
    const events = Array.from({ length: 100 }, (_, i) => ({
      event: 'delivered',
      email: 'alan@example.com',
      timestamp: times[i] ?? Math.floor(Date.UTC(2026, 10, 21, 8) / 1000),
      sg_event_id: `far-${i}`,
      campaign_message_id: String(message),
      campaign_subscriber_id: String(alan),
    }));
    const body = JSON.stringify(events);
    const answer = await post(`/webhook/provider_a?endpoint=${endpoint.id}`, body, signProviderA('far-secret', body));
    expect(answer.status).to.equal(200);
    expect(answer.body.data).to.deep.equal({ received: 100, recorded: 100 });
    const rows = await f.engine
      .knex('inbound_events')
      .whereIn('provider_event_id', ['delivered:far-3', 'delivered:far-4', 'delivered:far-5'])
      .orderBy('provider_event_id')
      .select('event_at', 'received_at');
    const iso = (d: unknown) => new Date(d as string | number | Date).toISOString();
    expect(
      rows.map((r: { event_at: unknown; received_at: unknown }) => iso(r.event_at) === iso(r.received_at)),
    ).to.deep.equal([true, true, false]);
    expect(iso(rows[2].event_at)).to.equal('2026-11-21T08:00:00.000Z');
    await f.api().delete(`/inbound-webhooks/${endpoint.id}`).expect(200);
  });

  it("refuses what is not the provider's, writing nothing: 401, 404, 403, 400, 413", async () => {
    const endpoint = await createEndpoint({ provider: 'provider_a', name: 'SG2', secret: 'sg-secret-2' });
    const other = await createTenant(f.engine, { name: 'Other' });
    const foreign = await createEndpoint({ provider: 'provider_a', name: 'Theirs', secret: 'their-secret' }, other);
    const body = JSON.stringify([{ event: 'delivered', email: 'ada@example.com', timestamp: 1, sg_event_id: 'r1' }]);
    const count = await events();
    const path = `/webhook/provider_a?endpoint=${endpoint.id}`;
    const wrong = await post(path, body, signProviderA('not-the-secret', body)).expect(401);
    expect(wrong.body.error.code).to.equal('SIGNATURE_INVALID');
    // A signature refused is no Bearer challenge (the API token's 401 is).
    expect(wrong.headers).to.not.have.property('www-authenticate');
    await post(path, body, {}).expect(401);
    // Older than SendGrid's 24 hours of retries.
    await post(path, body, signProviderA('sg-secret-2', body, new Date(Date.now() - 26 * 3600_000))).expect(401);
    // One organization's secret never opens another's endpoint.
    await post(`/webhook/provider_a?endpoint=${foreign.id}`, body, signProviderA('sg-secret-2', body)).expect(401);
    await post('/webhook/provider_q', body, signProviderA('sg-secret-2', body)).expect(404);
    await post('/webhook/provider_a?endpoint=999999', body, signProviderA('sg-secret-2', body)).expect(404);
    // Two active provider_a endpoints now: without ?endpoint there is no telling which.
    await post('/webhook/provider_a', body, signProviderA('sg-secret-2', body)).expect(404);
    const garbage = '{"not": "a batch"}';
    const malformed = await post(path, garbage, signProviderA('sg-secret-2', garbage)).expect(400);
    expect(malformed.body.error.code).to.equal('BAD_REQUEST');
    const huge = `[${'"x",'.repeat(300_000)}"x"]`;
    await post(path, huge, signProviderA('sg-secret-2', huge)).expect(413);
    await f.api().put(`/inbound-webhooks/${endpoint.id}`, { is_active: false }).expect(200);
    const inactive = await post(path, body, signProviderA('sg-secret-2', body)).expect(403);
    expect(inactive.body.error.code).to.equal('INACTIVE');
    expect(await events()).to.equal(count);
  });

  it('ignores event names of the object prototype, and refuses a body nested too deeply to store with a 400', async () => {
    const endpoint = await createEndpoint({ provider: 'provider_a', name: 'SG proto', secret: 'sg-proto' });
    const ids = { campaign_message_id: String(message), campaign_subscriber_id: String(ada) };
    const body = JSON.stringify([
      { event: 'constructor', email: 'ada@example.com', timestamp: 1, sg_event_id: 'proto-1', ...ids },
      { event: '__proto__', email: 'ada@example.com', timestamp: 1, sg_event_id: 'proto-2', ...ids },
      { event: 'delivered', email: 'ada@example.com', timestamp: 1, sg_event_id: 'proto-3', ...ids },
    ]);
    const delivered = Number((await counters()).count_delivered);
    const answer = await post(`/webhook/provider_a?endpoint=${endpoint.id}`, body, signProviderA('sg-proto', body));
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(Number((await counters()).count_delivered)).to.equal(delivered + 1);
    // An id that is an object no text can be made of: the body's fault, a 400 (a 500 costs no rate-limit point).
    const odd = JSON.stringify([
      { event: 'delivered', email: 'ada@example.com', timestamp: 1, sg_event_id: { toString: 1 } },
    ]);
    const unreadable = await post(`/webhook/provider_a?endpoint=${endpoint.id}`, odd, signProviderA('sg-proto', odd));
    expect(unreadable.status, JSON.stringify(unreadable.body)).to.equal(400);
    expect(unreadable.body.error.code).to.equal('BAD_REQUEST');

    const pm = await createEndpoint({ provider: 'provider_c', name: 'PM deep', secret: 'pm:deep-pass' });
    const depth = 100_000;
    const deep = `{"RecordType":"Delivery","Recipient":"ada@example.com","Deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const before = await events();
    const refused = await post(`/webhook/provider_c?endpoint=${pm.id}`, deep, {
      authorization: `Basic ${Buffer.from('pm:deep-pass').toString('base64')}`,
    });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(400);
    expect(refused.body.error.code).to.equal('BAD_REQUEST');
    expect(await events()).to.equal(before);
  });

  it('provider_c: HTTP Basic, an unsubscribe by Postmark moves the subscriber and counts a stop', async () => {
    const endpoint = await createEndpoint({ provider: 'provider_c', name: 'PM', secret: 'pm:secret-pass' });
    const fresh = (await f.api().post('/subscribers', { email: 'grace@example.com' }).expect(201)).body.data.id;
    const body = JSON.stringify({
      RecordType: 'SubscriptionChange',
      MessageID: 'pm-1',
      Recipient: 'grace@example.com',
      ChangedAt: new Date().toISOString(),
      SuppressSending: true,
      SuppressionReason: 'ManualSuppression',
      Metadata: { campaign_message_id: String(message), campaign_subscriber_id: String(fresh) },
    });
    const before = Number((await counters()).count_stop);
    const basic = (secret: string) => ({ authorization: `Basic ${Buffer.from(secret).toString('base64')}` });
    await post(`/webhook/provider_c?endpoint=${endpoint.id}`, body, basic('pm:wrong')).expect(401);
    await post(`/webhook/provider_c?endpoint=${endpoint.id}`, body, basic('pm:secret-pass')).expect(200);
    expect(Number((await counters()).count_stop)).to.equal(before + 1);
    const grace = (await f.api().get(`/subscribers/${fresh}`).expect(200)).body.data;
    expect(grace.status).to.equal('unsubscribed');
    expect(grace.unsubscribed_at).to.be.a('string');
  });

  it('provider_c: a hard bounce Postmark tells twice (Bounce, then SubscriptionChange) counts once', async () => {
    const endpoint = await createEndpoint({ provider: 'provider_c', name: 'PM-twice', secret: 'pm:twice-pass' });
    const fresh = (await f.api().post('/subscribers', { email: 'hopper@example.com' }).expect(201)).body.data.id;
    const mail = {
      MessageID: 'pm-bounced-1',
      Metadata: { campaign_message_id: String(message), campaign_subscriber_id: String(fresh) },
    };
    const bounce = JSON.stringify({
      RecordType: 'Bounce',
      ID: 7001,
      Type: 'HardBounce',
      Email: 'hopper@example.com',
      BouncedAt: new Date().toISOString(),
      Inactive: true,
      ...mail,
    });
    const suppression = JSON.stringify({
      RecordType: 'SubscriptionChange',
      Recipient: 'Hopper@Example.com',
      ChangedAt: new Date().toISOString(),
      SuppressSending: true,
      SuppressionReason: 'HardBounce',
      ...mail,
    });
    const path = `/webhook/provider_c?endpoint=${endpoint.id}`;
    const auth = { authorization: `Basic ${Buffer.from('pm:twice-pass').toString('base64')}` };
    const before = Number((await counters()).count_bounced);
    expect((await post(path, bounce, auth).expect(200)).body.data).to.deep.equal({ received: 1, recorded: 1 });
    expect((await post(path, suppression, auth).expect(200)).body.data).to.deep.equal({ received: 1, recorded: 0 });
    expect(Number((await counters()).count_bounced)).to.equal(before + 1);
    expect((await f.api().get(`/subscribers/${fresh}`).expect(200)).body.data.status).to.equal('bounced');
  });

  it('an endpoint changed by another process: its old secret refused at once, its new one accepted', async () => {
    const endpoint = await createEndpoint({ provider: 'provider_c', name: 'PM-rotating', secret: 'pm:old-pass' });
    const path = `/webhook/provider_c?endpoint=${endpoint.id}`;
    const basic = (secret: string) => ({ authorization: `Basic ${Buffer.from(secret).toString('base64')}` });
    let n = 0;
    const delivery = () =>
      JSON.stringify({
        RecordType: 'Delivery',
        MessageID: `pm-rotating-${n++}`,
        Recipient: 'ada@example.com',
        DeliveredAt: new Date().toISOString(),
        Metadata: { campaign_message_id: String(message), campaign_subscriber_id: String(ada) },
      });
    // This process has read the endpoint: it keeps what it read.
    await post(path, delivery(), basic('pm:old-pass')).expect(200);
    const before = Number((await counters()).count_delivered);
    // Another process rotates the secret (its own write, which this process's reading never saw).
    const secrets = campaignContainer(f.engine).resolve<SecretBox>(SERVICES.SecretBox);
    await f.engine
      .knex('inbound_webhooks')
      .where({ id: endpoint.id })
      .update({ secret: secrets.seal('pm:new-pass') });
    const refused = await post(path, delivery(), basic('pm:old-pass')).expect(401);
    expect(refused.body.error.code).to.equal('SIGNATURE_INVALID');
    await post(path, delivery(), basic('pm:new-pass')).expect(200);
    await post(path, delivery(), basic('pm:old-pass')).expect(401);
    // ... and switches it off, then on again.
    await f.engine.knex('inbound_webhooks').where({ id: endpoint.id }).update({ is_active: false });
    expect((await post(path, delivery(), basic('pm:new-pass')).expect(403)).body.error.code).to.equal('INACTIVE');
    await f.engine.knex('inbound_webhooks').where({ id: endpoint.id }).update({ is_active: true });
    await post(path, delivery(), basic('pm:new-pass')).expect(200);
    expect(Number((await counters()).count_delivered), 'the two accepted, nothing else').to.equal(before + 2);
    await f.engine.knex('inbound_webhooks').where({ id: endpoint.id }).delete();
    await post(path, delivery(), basic('pm:new-pass')).expect(404);
  });

  it('provider_e: a Mailgun token is taken once, across the whole deployment (the locks), also hours after it was signed', async () => {
    const endpoint = await createEndpoint({ provider: 'provider_e', name: 'Brevo', secret: 'brevo-secret' });
    // A retry that carries its first try's signature, 3 hours later (Mailgun retries for 8 hours): taken
    // where tokens are remembered that long (Redis); in one process's memory, 5 minutes at most.
    const age = backend().redisUrl ? 3 * 3600 : 240;
    const timestamp = String(Math.floor(Date.now() / 1000) - age);
    const token = crypto.randomBytes(25).toString('hex');
    const body = JSON.stringify({
      signature: {
        timestamp,
        token,
        signature: crypto
          .createHmac('sha256', 'brevo-secret')
          .update(timestamp + token)
          .digest('hex'),
      },
      'event-data': {
        event: 'delivered',
        email: 'ada@example.com',
        ts_event: Number(timestamp),
        'X-Mailin-custom': JSON.stringify({
          campaign_message_id: String(message),
          campaign_subscriber_id: String(ada),
        }),
      },
    });
    const before = Number((await counters()).count_delivered);
    const path = `/webhook/provider_e?endpoint=${endpoint.id}`;
    expect((await post(path, body, {}).expect(200)).body.data).to.deep.equal({ received: 1, recorded: 1 });
    const replayed = await post(path, body, {}).expect(401);
    expect(replayed.body.error.message).to.contain('used before');
    expect(Number((await counters()).count_delivered)).to.equal(before + 1);
  });

  it("links events without our ids through the mail's id: the one the relay gave it, or our Message-ID", async () => {
    const mails = mailsOf(sink, message);
    const adaMail = mails.find((m) => m.to.includes('ada@example.com'))!;
    const alanMail = mails.find((m) => m.to.includes('alan@example.com'))!;
    const relayId = /queued as (\S+)/.exec(adaMail.answer)![1];
    const ourMailId = /^Message-ID: <([^>]+)>/im.exec(alanMail.raw)![1];
    const postmark = await createEndpoint({ provider: 'provider_c', name: 'PM-link', secret: 'pm:link-secret' });
    const basic = { authorization: `Basic ${Buffer.from('pm:link-secret').toString('base64')}` };
    const delivery = (messageId: string, recipient: string) =>
      JSON.stringify({
        RecordType: 'Delivery',
        MessageID: messageId,
        Recipient: recipient,
        DeliveredAt: new Date().toISOString(),
      });
    const stored = (providerMessageId: string) =>
      f.engine
        .knex('inbound_events')
        .where({ provider_message_id: providerMessageId })
        .first('message_id', 'subscriber_id');
    // The address is not a subscriber's (forwarded): only the relay's id links the event.
    await post(`/webhook/provider_c?endpoint=${postmark.id}`, delivery(relayId, 'fwd@elsewhere.example'), basic).expect(
      200,
    );
    const byRelay = await stored(relayId);
    expect([Number(byRelay.message_id), Number(byRelay.subscriber_id)]).to.deep.equal([message, ada]);

    const brevo = await createEndpoint({ provider: 'provider_e', name: 'Brevo-link', secret: 'brevo-link' });
    const signedE = (data: Record<string, unknown>) => {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const token = crypto.randomBytes(25).toString('hex');
      const signature = crypto
        .createHmac('sha256', 'brevo-link')
        .update(timestamp + token)
        .digest('hex');
      return JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': data });
    };
    const ts = Math.floor(Date.now() / 1000);
    await post(
      `/webhook/provider_e?endpoint=${brevo.id}`,
      signedE({ event: 'opened', email: 'alias@elsewhere.example', ts_event: ts, 'message-id': `<${ourMailId}>` }),
      {},
    ).expect(200);
    const byOurs = await stored(ourMailId);
    expect([Number(byOurs.message_id), Number(byOurs.subscriber_id)]).to.deep.equal([message, alan]);
    // SendGrid without our custom arguments: its smtp-id is the mail's Message-ID header, ours (issue 24).
    const sendgrid = await createEndpoint({ provider: 'provider_a', name: 'SG-link', secret: 'sg-link-secret' });
    const smtpIdBatch = JSON.stringify([
      {
        email: 'alias3@elsewhere.example',
        timestamp: ts,
        'smtp-id': `<${ourMailId}>`,
        event: 'delivered',
        sg_event_id: 'smtp-id-linked-1',
        sg_message_id: 'NotOurs123.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC1BC-1.0',
      },
    ]);
    await post(
      `/webhook/provider_a?endpoint=${sendgrid.id}`,
      smtpIdBatch,
      signProviderA('sg-link-secret', smtpIdBatch),
    ).expect(200);
    const bySmtpId = await f.engine
      .knex('inbound_events')
      .where({ provider: 'provider_a', provider_event_id: 'delivered:smtp-id-linked-1' })
      .first('message_id', 'subscriber_id');
    expect([Number(bySmtpId.message_id), Number(bySmtpId.subscriber_id)]).to.deep.equal([message, alan]);
    // Our form with another host names no mail we sent: nothing is linked.
    const forged = ourMailId.replace(/@.*$/, '@forged.example');
    await post(
      `/webhook/provider_e?endpoint=${brevo.id}`,
      signedE({ event: 'opened', email: 'alias2@elsewhere.example', ts_event: ts, 'message-id': forged }),
      {},
    ).expect(200);
    expect(await stored(forged)).to.deep.include({ message_id: null, subscriber_id: null });

    // Another organization's endpoint learns nothing from our relay ids.
    const other = await createTenant(f.engine, { name: 'Linker' });
    const theirs = await createEndpoint({ provider: 'provider_c', name: 'T', secret: 'them:their-pass' }, other);
    const foreignBody = JSON.stringify({
      RecordType: 'Open',
      MessageID: relayId,
      Recipient: 'x@y.example',
      ReceivedAt: new Date().toISOString(),
    });
    await post(`/webhook/provider_c?endpoint=${theirs.id}`, foreignBody, {
      authorization: `Basic ${Buffer.from('them:their-pass').toString('base64')}`,
    }).expect(200);
    const foreign = await f.engine
      .knex('inbound_events')
      .where({ provider_message_id: relayId, event_type: 'opened' })
      .first('message_id', 'subscriber_id', 'organization_id');
    expect(foreign).to.deep.include({ message_id: null, subscriber_id: null });
  });

  it('provider_d: SNS messages of an allowed topic, the certificate read once, a confirmation visited', async () => {
    const signer = snsTestSigner();
    const visited: string[] = [];
    campaignContainer(f.engine).register(REMOTE_TEXT, {
      useValue: async (url: string) => {
        visited.push(url);
        return url === TEST_CERT_URL ? signer.certificate : 'confirmed';
      },
    });
    const topic = 'arn:aws:sns:us-east-1:123456789012:ses-events';
    const endpoint = await createEndpoint({ provider: 'provider_d', name: 'SES', topic_arns: [topic] });
    expect(endpoint.topic_arns).to.deep.equal([topic]);
    await f
      .api()
      .post('/inbound-webhooks', { provider: 'provider_d', name: 'Bad', topic_arns: ['not-an-arn'] })
      .expect(422);
    const path = `/webhook/provider_d?endpoint=${endpoint.id}`;
    const confirmation = signer.sign({
      Type: 'SubscriptionConfirmation',
      MessageId: crypto.randomUUID(),
      Token: 'tok',
      TopicArn: topic,
      Message: 'You have chosen to subscribe',
      SubscribeURL: 'https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=tok',
      Timestamp: new Date().toISOString(),
    });
    const confirmed = await post(path, JSON.stringify(confirmation), { 'content-type': 'text/plain' }).expect(200);
    expect(confirmed.body.data).to.deep.equal({ received: 0, recorded: 0, confirmed: true });
    expect(visited).to.include('https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription&Token=tok');
    const delivery = signer.sign({
      Type: 'Notification',
      MessageId: crypto.randomUUID(),
      TopicArn: topic,
      Timestamp: new Date().toISOString(),
      Message: JSON.stringify({
        eventType: 'Delivery',
        mail: {
          messageId: 'ses-1',
          tags: { campaign_message_id: [String(message)], campaign_subscriber_id: [String(ada)] },
        },
        delivery: { timestamp: new Date().toISOString(), recipients: ['ada@example.com'] },
      }),
    });
    const before = Number((await counters()).count_delivered);
    const res = await post(path, JSON.stringify(delivery), { 'content-type': 'text/plain' }).expect(200);
    expect(res.body.data).to.deep.equal({ received: 1, recorded: 1 });
    expect(Number((await counters()).count_delivered)).to.equal(before + 1);
    expect(visited.filter((url) => url === TEST_CERT_URL)).to.have.length.at.most(1);
    const foreign = signer.sign({ ...delivery, TopicArn: 'arn:aws:sns:us-east-1:123456789012:other' });
    await post(path, JSON.stringify(foreign), { 'content-type': 'text/plain' }).expect(401);
  });

  it("sends every mail with the enabled adapters' id headers", () => {
    const [mail] = mailsOf(sink, message);
    expect(mail.raw).to.match(/^X-SMTPAPI: .*"campaign_message_id":"\d+"/m);
    expect(mail.raw).to.match(
      /^X-Mailgun-Variables: \{"campaign_message_id":"\d+","campaign_subscriber_id":"\d+"\}\r?$/m,
    );
    expect(mail.raw).to.match(/^X-Mailin-custom: \{"campaign_message_id":"\d+"/im);
    // nodemailer capitalizes header names; Postmark's keys are read whatever their case.
    expect(mail.raw).to.match(new RegExp(`^X-PM-Metadata-campaign_message_id: ${message}\\r?$`, 'im'));
  });

  it("commits a complaint and its subscriber's change together: a crash between keeps neither, the retry both", async () => {
    const endpoint = await createEndpoint({ provider: 'provider_a', name: 'SG 2', secret: 'sg-secret-2' });
    const complaint = JSON.stringify([
      {
        event: 'spamreport',
        email: 'ada@example.com',
        timestamp: Math.floor(Date.now() / 1000),
        sg_event_id: 'sp1',
        campaign_message_id: String(message),
        campaign_subscriber_id: String(ada),
      },
    ]);
    const path = `/webhook/provider_a?endpoint=${endpoint.id}`;
    const status = async () => (await f.api().get(`/subscribers/${ada}`).expect(200)).body.data.status;
    const stored = () => f.engine.knex('inbound_events').where({ provider_event_id: 'spamreport:sp1' }).first();
    expect(await status()).to.equal('active');

    const change = SubscriberWriter.prototype.setStatusWithin;
    SubscriberWriter.prototype.setStatusWithin = async () => {
      throw new Error('the process dies between recording the event and moving the subscriber');
    };
    try {
      await post(path, complaint, signProviderA('sg-secret-2', complaint)).expect(500);
    } finally {
      SubscriberWriter.prototype.setStatusWithin = change;
    }
    expect(await stored(), 'the event is not kept without its effect').to.equal(undefined);
    expect(await status()).to.equal('active');

    const retry = await post(path, complaint, signProviderA('sg-secret-2', complaint)).expect(200);
    expect(retry.body.data).to.deep.equal({ received: 1, recorded: 1 });
    expect(await stored()).to.not.equal(undefined);
    expect(await status()).to.equal('unsubscribed');
  });

  it("reads Mailgun's current JSON webhooks and Brevo's own body through the route (issue 24)", async () => {
    const before = await counters();
    const statusOf = async () => (await f.api().get(`/subscribers/${alan}`).expect(200)).body.data.status;
    const statusBefore = await statusOf();
    // Mailgun: {signature, event-data}, signed with the domain's webhook signing key.
    const mailgun = await createEndpoint({ provider: 'provider_b', name: 'MG-json', secret: 'mailgun-signing-key' });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = crypto.randomBytes(25).toString('hex');
    const signedEvent = (eventToken: string, data: Record<string, unknown>) =>
      JSON.stringify({
        signature: {
          timestamp,
          token: eventToken,
          signature: crypto
            .createHmac('sha256', 'mailgun-signing-key')
            .update(timestamp + eventToken)
            .digest('hex'),
        },
        'event-data': {
          timestamp: Number(timestamp),
          recipient: 'alan@example.com',
          'user-variables': { campaign_message_id: String(message), campaign_subscriber_id: String(alan) },
          ...data,
        },
      });
    const mailgunPath = `/webhook/provider_b?endpoint=${mailgun.id}`;
    // A temporary failure is an attempt Mailgun makes again itself: nothing recorded, no bounce counted.
    const temporary = signedEvent(token, { event: 'failed', severity: 'temporary', id: 'mg-json-1' });
    const mg = await post(mailgunPath, temporary, {}).expect(200);
    expect(mg.body.data).to.deep.equal({ received: 0, recorded: 0 });
    expect(await statusOf()).to.equal(statusBefore);
    const mailgunDelivered = signedEvent(crypto.randomBytes(25).toString('hex'), {
      event: 'delivered',
      id: 'mg-json-2',
    });
    expect((await post(mailgunPath, mailgunDelivered, {}).expect(200)).body.data).to.deep.equal({
      received: 1,
      recorded: 1,
    });

    // Brevo: its flat body, with the bearer token the user set in Brevo.
    const brevo = await createEndpoint({ provider: 'provider_e', name: 'Brevo-own', secret: 'brevo-bearer-token' });
    const delivered = JSON.stringify({
      event: 'delivered',
      email: 'alan@example.com',
      id: 26224,
      ts_epoch: Date.now(),
      'message-id': '<some.brevo.id@relay.example>',
      'X-Mailin-custom': JSON.stringify({ campaign_message_id: String(message), campaign_subscriber_id: String(alan) }),
    });
    const path = `/webhook/provider_e?endpoint=${brevo.id}`;
    await post(path, delivered, { authorization: 'Bearer another-token' }).expect(401);
    const br = await post(path, delivered, { authorization: 'Bearer brevo-bearer-token' }).expect(200);
    expect(br.body.data).to.deep.equal({ received: 1, recorded: 1 });
    // Brevo's retry of the same event: the same body, recorded once.
    const again = await post(path, delivered, { authorization: 'Bearer brevo-bearer-token' }).expect(200);
    expect(again.body.data).to.deep.equal({ received: 1, recorded: 0 });
    // A batched Brevo webhook: an array of its events, the delivery above among them (recorded once).
    const opened = { ...JSON.parse(delivered), event: 'opened', ts_epoch: Date.now() + 1 };
    const batch = `[${delivered}, ${JSON.stringify(opened)}]`;
    const batched = await post(path, batch, { authorization: 'Bearer brevo-bearer-token' }).expect(200);
    expect(batched.body.data).to.deep.equal({ received: 2, recorded: 1 });
    const after = await counters();
    expect(Number(after.count_bounced) - Number(before.count_bounced)).to.equal(0);
    expect(Number(after.count_delivered) - Number(before.count_delivered)).to.equal(2);
  });
});
