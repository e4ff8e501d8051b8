import crypto from 'node:crypto';
import net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { expect } from 'chai';
import request from 'supertest';
import { createTenant, describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { deliveryOf, draftMessage, listOf, mailsOf, sendNow } from '../../shared/tests/sending-support';
import { SendWatchdog } from '../watchdog';
import { RANGE_SIZE, SendStore } from '../send-store';

describeEachBackend('campaign: sending a message to lists', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let news: number;
  let vip: number;
  const ids: Record<string, number> = {};
  before(async () => {
    sink = await smtpSink({ refuse: (address) => (address === 'refused@example.com' ? 550 : null) });
    f = await campaignFixture(backend(), { SMTP_URL: sink.url, PUBLIC_URL: 'http://mail.test' });
    f.engine.startWorkers();
    const api = f.api();
    news = (await api.post('/lists', { name: 'News', code: 'news' }).expect(201)).body.data.id;
    vip = (await api.post('/lists', { name: 'VIP', code: 'vip' }).expect(201)).body.data.id;
    const people = [
      { email: 'ada@example.com', first_name: 'Ada', lists: [news, vip], meta_data: { city: 'London' } },
      { email: 'grace@example.com', first_name: 'Grace <b>', lists: [news] },
      { email: 'alan@example.com', first_name: null, lists: [vip] },
      { email: 'refused@example.com', first_name: 'Ref', lists: [news] },
      { email: 'gone@example.com', first_name: 'Gone', lists: [news] },
      { email: 'pending@example.com', first_name: 'Pen', lists: [news], confirmed: false },
    ];
    for (const p of people) {
      const { confirmed = true, ...rest } = p;
      ids[p.email] = (await api.post('/subscribers', { ...rest, confirmed }).expect(201)).body.data.id;
    }
    await api.post(`/subscribers/${ids['gone@example.com']}/unsubscribe`).expect(200);
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  const message = async (fields: Record<string, unknown> = {}) =>
    (
      await f
        .api()
        .post('/messages', {
          name: 'Hello',
          subject: 'Hi {{first_name | "there"}}',
          content_html:
            '<p>Hello {{ subscriber.first_name }} from {{meta.city}}</p><a href="https://acme.test/x">x</a>',
          from_name: 'Acme',
          from_email: 'news@acme.test',
          ...fields,
        })
        .expect(201)
    ).body.data.id as number;

  const finished = async (id: number) => {
    await waitFor(async () => (await f.api().get(`/messages/${id}`).expect(200)).body.data.status === 'sent', 15_000);
    return (await f.api().get(`/messages/${id}`).expect(200)).body.data;
  };

  /** A header of a raw mail, unfolded. */
  const header = (raw: string, name: string) =>
    raw
      .split(/\r?\n\r?\n/)[0]
      .replace(/\r?\n[ \t]+/g, ' ')
      .split(/\r?\n/)
      .find((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`))
      ?.slice(name.length + 1)
      .trim();

  /** The mails of message `id` the sink got for `address`. */
  const received = (id: number, address: string) => mailsOf(sink, id).filter((m) => m.to.includes(address));

  it('sends once to each active subscriber of the lists, rendered for each, and counts what happened', async () => {
    const id = await message();
    const res = await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [news, vip] })
      .expect(200);
    expect(res.body.data).to.include({ status: 'active', test_mode: false, recipients: 4 });

    const done = await finished(id);
    expect(done.stats.sent).to.equal(3);
    expect(done.sent_at).to.be.a('string');
    expect(done.delivery).to.include({ status: 'sent', recipients: 4, queued: 0, sent: 3, failed: 1, skipped: 0 });

    expect(received(id, 'ada@example.com')).to.have.length(1);
    expect(received(id, 'grace@example.com')).to.have.length(1);
    expect(received(id, 'alan@example.com')).to.have.length(1);
    for (const nobody of ['refused@example.com', 'gone@example.com', 'pending@example.com'])
      expect(received(id, nobody)).to.have.length(0);

    const ada = await received(id, 'ada@example.com')[0].parse();
    expect(ada.subject).to.equal('Hi Ada');
    expect(ada.html).to.include('<p>Hello Ada from London</p>');
    expect(ada.text).to.include('Hello Ada from London');
    expect(ada.from?.value[0]).to.deep.include({ name: 'Acme', address: 'news@acme.test' });
    expect(ada.headers.get('x-campaign-subscriber-id')).to.equal(String(ids['ada@example.com']));
    const adaRaw = received(id, 'ada@example.com')[0].raw;
    expect(header(adaRaw, 'List-Unsubscribe-Post')).to.equal('List-Unsubscribe=One-Click');
    expect(header(adaRaw, 'List-Unsubscribe')).to.match(/^<http:\/\/mail\.test\/api\/campaign\/unsubscribe\?token=/);
    expect(ada.messageId).to.match(new RegExp(`^<\\d+\\.${ids['ada@example.com']}\\.${id}@mail\\.test>$`));

    const grace = await received(id, 'grace@example.com')[0].parse();
    expect(grace.html).to.include('Hello Grace &lt;b&gt; from </p>');
    const alan = await received(id, 'alan@example.com')[0].parse();
    expect(alan.subject).to.equal('Hi there');

    const subscriber = (await f.api().get(`/subscribers/${ids['ada@example.com']}`).expect(200)).body.data;
    expect(subscriber.messages_received).to.equal(1);
  });

  it('one-click unsubscribe from a mail: GET asks, POST unsubscribes once and counts it on the message', async () => {
    const id = await message({ name: 'Unsub' });
    await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [vip] })
      .expect(200);
    await finished(id);
    const mail = received(id, 'alan@example.com')[0].raw;
    const link = /<(http:\/\/mail\.test(\/api\/campaign\/unsubscribe\?token=[^>]+))>/.exec(
      header(mail, 'List-Unsubscribe')!,
    )!;
    const path = link[2];
    const page = await request(f.server).get(path).expect(200);
    expect(page.headers['content-type']).to.match(/html/);
    expect(page.text).to.include('alan@example.com').and.include('<form method="post"');
    expect(page.headers['content-security-policy']).to.include("frame-ancestors 'none'");

    await request(f.server).post(path).type('form').send('List-Unsubscribe=One-Click').expect(200);
    await request(f.server).post(path).expect(200);
    const alan = (await f.api().get(`/subscribers/${ids['alan@example.com']}`).expect(200)).body.data;
    expect(alan.status).to.equal('unsubscribed');
    expect((await f.api().get(`/messages/${id}`).expect(200)).body.data.stats.unsubscribed).to.equal(1);

    const tampered = path.slice(0, -1) + (path.endsWith('A') ? 'B' : 'A');
    const broken = await request(f.server).post(tampered).expect(404);
    // A person followed it: a page says so, not the API's JSON.
    expect(broken.headers['content-type']).to.match(/html/);
    expect(broken.text).to.include('Link not valid');
    await request(f.server).get('/api/campaign/unsubscribe?token=1.2.3.abc').expect(404);
  });
});

describeEachBackend('campaign: send, test and cancel: the status machine and what is refused', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let news: number;
  before(async () => {
    sink = await smtpSink();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url });
    f.engine.startWorkers();
    news = (await f.api().post('/lists', { name: 'News', code: 'news' }).expect(201)).body.data.id;
    for (const name of ['Ada', 'Grace'])
      await f
        .api()
        .post('/subscribers', {
          email: `${name.toLowerCase()}@example.com`,
          first_name: name,
          lists: [news],
          confirmed: true,
        })
        .expect(201);
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  const draft = (fields: Record<string, unknown> = {}) =>
    draftMessage(f, { subject: 'Hello {{first_name}}', content_text: 'Hi', ...fields });
  const statusOf = async (id: number) => (await f.api().get(`/messages/${id}`).expect(200)).body.data;
  const refused = async (path: string, body: object, field: string) => {
    const res = await f.api().post(path, body).expect(422);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    expect(res.body.error.details.field).to.equal(field);
    return res.body.error.message as string;
  };

  it('refuses unknown or foreign lists, an empty list set, a past or clockless scheduled_at and a message without a sender', async () => {
    const id = await draft();
    expect(await refused(`/messages/${id}/send`, { list_ids: [news, 999_999] }, 'list_ids')).to.include('999999');
    const stranger = await createTenant(f.engine, { name: 'Other' });
    const foreign = (await f.api(stranger).post('/lists', { name: 'Theirs', code: 'theirs' }).expect(201)).body.data.id;
    expect(await refused(`/messages/${id}/send`, { list_ids: [foreign] }, 'list_ids')).to.include(String(foreign));
    await refused(`/messages/${id}/send`, { list_ids: [] }, 'list_ids');
    await refused(`/messages/${id}/send`, {}, 'list_ids');
    await refused(`/messages/${id}/send`, { list_ids: [news], scheduled_at: '2020-01-01T00:00:00Z' }, 'scheduled_at');
    // A leap second the date-time format allows and no clock shows: it would be stored as no time, never due.
    await refused(`/messages/${id}/send`, { list_ids: [news], scheduled_at: '2030-06-30T23:59:60Z' }, 'scheduled_at');
    // Year 9999 locally, 10000 in UTC: no DATETIME holds it (a 500, and on SQLite a message that failed every read).
    expect(
      await refused(
        `/messages/${id}/send`,
        { list_ids: [news], scheduled_at: '9999-12-31T23:59:59-05:00' },
        'scheduled_at',
      ),
    ).to.equal('scheduled_at must be before the year 10000 in UTC');
    const anonymous = await draft({ from_email: null });
    expect(await refused(`/messages/${anonymous}/send`, { list_ids: [news] }, 'from_email')).to.include(
      'sender profile',
    );
    expect((await statusOf(id)).status).to.equal('draft');
    await f
      .api()
      .post('/messages/999999/send', { list_ids: [news] })
      .expect(404);
  });

  const sentTo = (id: number) => mailsOf(sink, id);
  const untilStatus = async (id: number, status: string) => {
    await waitFor(async () => (await statusOf(id)).status === status, 15_000);
    return statusOf(id);
  };

  it('draft -> active -> sent; a sent message is not sent again; cancel needs a pending or active send', async () => {
    const id = await draft();
    await refused(`/messages/${id}/cancel`, {}, 'status');
    await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [news] })
      .expect(200);
    const sent = await untilStatus(id, 'sent');
    expect(sent.stats.sent).to.equal(2);
    expect(sentTo(id)).to.have.length(2);
    expect(await refused(`/messages/${id}/send`, { list_ids: [news] }, 'status')).to.include('sent already');
    await refused(`/messages/${id}/cancel`, {}, 'status');
    await f.api().put(`/messages/${id}`, { subject: 'Changed' }).expect(422);
  });

  it('draft -> pending (scheduled_at) -> cancelled -> sent again: the watchdog starts a due send', async () => {
    const id = await draft();
    const at = new Date(Date.now() + 60_000).toISOString();
    const res = await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [news], scheduled_at: at })
      .expect(200);
    expect(res.body.data).to.include({ status: 'pending', scheduled_at: at, recipients: 2 });
    expect((await statusOf(id)).status).to.equal('pending');
    await refused(`/messages/${id}/send`, { list_ids: [news] }, 'status');
    await f.api().put(`/messages/${id}`, { subject: 'Changed' }).expect(422);

    await f.api().post(`/messages/${id}/cancel`).expect(200);
    const cancelled = await statusOf(id);
    expect(cancelled.status).to.equal('cancelled');
    expect(cancelled.delivery.status).to.equal('cancelled');
    // The cancelled send's time comes: nothing starts. (A tick more than the claim lease ahead of the
    // workers' clock would take their claims for a dead worker's.)
    await campaignContainer(f.engine)
      .resolve(SendWatchdog)
      .tick(new Date(Date.parse(at) + 1000));
    expect((await statusOf(id)).status).to.equal('cancelled');
    expect(sentTo(id)).to.have.length(0);

    const again = new Date(Date.now() + 60_000).toISOString();
    await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [news], scheduled_at: again })
      .expect(200);
    await campaignContainer(f.engine)
      .resolve(SendWatchdog)
      .tick(new Date(Date.parse(again) + 1000));
    expect((await untilStatus(id, 'sent')).stats.sent).to.equal(2);
    expect(sentTo(id)).to.have.length(2);
  });

  it('test_mode renders and records every recipient, delivers nothing and leaves the message a draft', async () => {
    const id = await draft();
    const res = await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [news], test_mode: true })
      .expect(200);
    expect(res.body.data).to.include({ test_mode: true, recipients: 2 });
    await waitFor(async () => (await statusOf(id)).delivery?.status === 'sent', 15_000);
    const message = await statusOf(id);
    expect(message.status).to.equal('draft');
    expect(message.stats.sent).to.equal(0);
    expect(message.delivery).to.include({ test_mode: true, recipients: 2, sent: 2, queued: 0 });
    expect(sentTo(id)).to.have.length(0);
    // A second dry run (the draft edited, say) renders for everybody again.
    const again = await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [news], test_mode: true })
      .expect(200);
    expect(again.body.data).to.include({ test_mode: true, recipients: 2 });
    await waitFor(async () => (await statusOf(id)).delivery?.sent === 2, 15_000);
    // A real send afterwards reaches everybody.
    await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [news] })
      .expect(200);
    expect((await untilStatus(id, 'sent')).stats.sent).to.equal(2);
  });

  it('POST /test sends one mail now, marked as a test, rendered for that subscriber, and counts nothing', async () => {
    const id = await draft();
    const res = await f.api().post(`/messages/${id}/test`, { email: 'ada@example.com' }).expect(200);
    expect(res.body.data.email).to.equal('ada@example.com');
    const mail = await sink.mails.find((m) => m.raw.includes(res.body.data.message_id_header))!.parse();
    expect(mail.subject).to.equal('[Test] Hello Ada');
    await f.api().post(`/messages/${id}/test`, { email: 'nobody@example.com' }).expect(200);
    const blank = sink.mails.filter((m) => m.to.includes('nobody@example.com'));
    expect(blank).to.have.length(1);
    // No subscriber has that address: the mail is rendered with sample data (issue 24).
    expect((await blank[0].parse()).subject).to.equal('[Test] Hello Jane');
    // Our one Message-ID rule: the PUBLIC_URL host, test mails included.
    const host = new URL(f.engine.config.publicUrl).hostname;
    expect(res.body.data.message_id_header).to.match(
      new RegExp(`^<test\\.${id}\\.\\d+@${host.replace(/\./g, '\\.')}>$`),
    );
    // Its unsubscribe link works and says it belongs to a test mail; it unsubscribes nobody, Ada included.
    const link = /^List-Unsubscribe: <([^>]+)>/m.exec(
      sink.mails.find((m) => m.raw.includes(res.body.data.message_id_header))!.raw,
    )![1];
    const local = new URL(link).pathname + new URL(link).search;
    await request(f.server)
      .get(local)
      .expect(200, /A test mail/);
    await request(f.server)
      .post(local)
      .type('form')
      .send('List-Unsubscribe=One-Click')
      .expect(200, /unsubscribes nobody/);
    const ada = (await f.api().get('/subscribers?search=email:ada@example.com').expect(200)).body.data[0];
    expect(ada.status).to.equal('active');
    // The preheader is the body's first element, inside <body>, not before <html>.
    const withPreheader = await draft({ content_html: '<html><body><p>Hi</p></body></html>', preheader: 'In short' });
    await f.api().post(`/messages/${withPreheader}/test`, { email: 'pre@example.com' }).expect(200);
    const html = String((await sink.mails.find((m) => m.to.includes('pre@example.com'))!.parse()).html);
    expect(html).to.match(/^<html><body><div style="display:none[^>]*>In short<\/div><p>Hi<\/p>/);
    const message = await statusOf(id);
    expect(message).to.deep.include({ status: 'draft', delivery: null });
    expect(message.stats.sent).to.equal(0);
    await refused(`/messages/${id}/test`, { email: 'not an address' }, 'email');
  });

  it("the text part made from the HTML keeps each person's values (headings too); a part without its own unsubscribe link gets the footer", async () => {
    const partOf = async (fields: Record<string, unknown>) => {
      const id = await draft(fields);
      const res = await f.api().post(`/messages/${id}/test`, { email: 'ada@example.com' }).expect(200);
      return sink.mails.find((m) => m.raw.includes(res.body.data.message_id_header))!.parse();
    };
    const converted = await partOf({
      content_html: `<h1>Dear {{first_name}}</h1><p>${'word '.repeat(15)}{{ last_name | "dear reader of ours" }}</p>`,
      content_text: null,
    });
    expect(converted.text).to.match(/^DEAR Ada\n/);
    expect(converted.text).to.contain('dear reader of ours');
    // The tag is in the text only: the HTML part still shows a way out.
    const textOnly = await partOf({
      content_html: '<html><body><p>News</p></body></html>',
      content_text: 'News. Leave: {{unsubscribe_url}}',
    });
    expect(String(textOnly.html)).to.match(/<a href="[^"]+">Unsubscribe<\/a><\/p><\/body>/);
    expect(textOnly.text).to.not.contain('\n--\nUnsubscribe:');
  });
});

describeEachBackend('campaign: sending when SMTP refuses for now or for good', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let list: number;
  let later = 0;
  const refusals = new Map<string, number>();
  before(async () => {
    // flaky@ is refused for now twice, stuck@ always for now, gone@ for good.
    sink = await smtpSink({
      refuse: (address) => {
        const tries = (refusals.get(address) ?? 0) + 1;
        refusals.set(address, tries);
        if (address === 'flaky@example.com') return tries <= 2 ? 451 : null;
        if (address === 'stuck@example.com') return 452;
        if (address === 'gone@example.com') return 550;
        return null;
      },
    });
    f = await campaignFixture(backend(), { SMTP_URL: sink.url }, { now: () => new Date(Date.now() + later) });
    f.engine.startWorkers();
    list = (await f.api().post('/lists', { name: 'L', code: 'l' }).expect(201)).body.data.id;
    for (const local of ['ok', 'flaky', 'stuck', 'gone'])
      await f
        .api()
        .post('/subscribers', { email: `${local}@example.com`, lists: [list], confirmed: true })
        .expect(201);
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  it('fails a 5xx at once, tries a 4xx again after 1, 2, 4 and 8 minutes, then fails it and finishes', async () => {
    const id = await sendNow(f, [list]);
    const delivery = () => deliveryOf(f, id);
    await waitFor(async () => (await delivery()).queued === 2, 15_000);
    expect(await delivery()).to.include({ status: 'active', sent: 1, failed: 1 });

    const watchdog = campaignContainer(f.engine).resolve(SendWatchdog);
    // Waits of 1, 2, 4 and 8 minutes, the watchdog ticking as it does every few seconds. Just before each
    // wait ends nothing is tried; just after, the next try comes.
    const refusedStuck = () => refusals.get('stuck@example.com');
    const store = campaignContainer(f.engine).resolve(SendStore);
    const sendId = (await delivery()).id as number;
    for (let retry = 1, waited = 0; retry <= 4; retry++) {
      waited += 2 ** (retry - 1) * 60_000;
      later = waited - 2000;
      expect(await store.claim(sendId, 0, 1e9)).to.equal(null);
      expect(refusedStuck()).to.equal(retry);
      later = waited + 1000 * retry;
      await waitFor(async () => {
        await watchdog.tick(new Date(Date.now() + later));
        // Refused again and recorded (while the clock still reads this time).
        const sending = await f.engine.knex('send_recipients').where({ state: 'sending' }).first('subscriber_id');
        return refusedStuck() === retry + 1 && !sending;
      }, 15_000);
    }
    await waitFor(async () => (await delivery()).status === 'sent', 15_000);
    const done = (await f.api().get(`/messages/${id}`).expect(200)).body.data;
    expect(done.status).to.equal('sent');
    expect(done.delivery).to.include({ recipients: 4, sent: 2, failed: 2, queued: 0 });
    expect(refusals.get('flaky@example.com')).to.equal(3);
    expect(refusals.get('stuck@example.com')).to.equal(5);
    expect(refusals.get('gone@example.com')).to.equal(1);
    expect(sink.to('flaky@example.com')).to.have.length(1);
    // A test mail the server refuses is the caller's answer, not a server error.
    const test = await f.api().post(`/messages/${id}/test`, { email: 'gone@example.com' }).expect(422);
    expect(test.body.error.details).to.deep.equal({ field: 'email', rule: 'delivery' });
    expect(test.body.error.message).to.match(/not accepted: .*550/);
  });
});

describeEachBackend('campaign: a relay out of reach', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink | undefined;
  let later = 0;
  let port: number;
  before(async () => {
    // A port nobody listens on: every connection refused, until the sink takes it.
    port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    f = await campaignFixture(
      backend(),
      { SMTP_URL: `smtp://127.0.0.1:${port}` },
      { now: () => new Date(Date.now() + later) },
    );
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  it('keeps its recipients queued with no try spent, however long, and sends each once when it answers', async function () {
    // Seven watchdog rounds of a send through the queue: ~5 s here, 60 s allowed.
    this.timeout(60_000);
    const list = (await f.api().post('/lists', { name: 'R', code: 'r' }).expect(201)).body.data.id;
    for (const local of ['a', 'b', 'c'])
      await f
        .api()
        .post('/subscribers', { email: `${local}@relay.example`, lists: [list], confirmed: true })
        .expect(201);
    const id = await sendNow(f, [list]);
    const sendId = (await deliveryOf(f, id)).id as number;
    const rows = () =>
      f.engine.knex('send_recipients').where({ send_id: sendId }).select('state', 'attempts', 'error', 'claimed_at');
    const watchdog = campaignContainer(f.engine).resolve(SendWatchdog);
    let waitingSince: string | undefined;
    // More rounds than MAX_ATTEMPTS: a refused connection spends no try, so nobody fails.
    for (let round = 1; round <= 7; round++) {
      const since = new Date(Date.now() + later - 1000);
      await waitFor(async () => {
        if (round > 1) await watchdog.tick(new Date(Date.now() + later));
        const now = await rows();
        return now.every((r) => r.state === 'queued' && r.claimed_at && new Date(r.claimed_at) >= since);
      }, 15_000);
      for (const r of await rows()) {
        expect(r.attempts, `round ${round}`).to.equal(0);
        expect(r.error).to.match(/ECONNREFUSED/);
      }
      const delivery = await deliveryOf(f, id);
      expect(delivery).to.include({ status: 'active', failed: 0, queued: 3 });
      // The send says why it does not move, and since when: the first round's time, kept.
      expect(delivery.waiting_reason).to.match(/ECONNREFUSED/);
      expect(delivery.waiting_since).to.be.a('string');
      waitingSince ??= delivery.waiting_since as string;
      expect(delivery.waiting_since, `round ${round}`).to.equal(waitingSince);
      later += 2 * 60_000;
    }
    sink = await smtpSink({ port });
    await waitFor(async () => {
      await watchdog.tick(new Date(Date.now() + later));
      return (await deliveryOf(f, id)).status === 'sent';
    }, 15_000);
    expect(await deliveryOf(f, id)).to.include({
      sent: 3,
      failed: 0,
      queued: 0,
      waiting_since: null,
      waiting_reason: null,
    });
    for (const local of ['a', 'b', 'c']) expect(sink.to(`${local}@relay.example`)).to.have.length(1);
  });
});

describeEachBackend('campaign: a relay refusing our login', (backend) => {
  let f: CampaignFixture;
  let relay: SMTPServer;
  let port: number;
  let later = 0;
  before(async () => {
    relay = new SMTPServer({
      logger: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      onAuth: (_auth, _session, callback) => callback(new Error('Invalid username or password')),
    });
    port = await new Promise<number>((resolve) =>
      relay.listen(0, '127.0.0.1', () => resolve((relay.server.address() as net.AddressInfo).port)),
    );
    f = await campaignFixture(
      backend(),
      { SMTP_URL: `smtp://ops:wrong@127.0.0.1:${port}` },
      { now: () => new Date(Date.now() + later) },
    );
    f.engine.startWorkers();
  });
  after(async () => {
    await f?.close();
    if (relay?.server.listening) await new Promise<void>((resolve) => relay.close(() => resolve()));
  });

  it('pauses the send saying why, its recipients queued with no try spent, none failed; resumed, waits for the relay from then on', async function () {
    // One claim through the queue: ~1 s here, 30 s allowed.
    this.timeout(30_000);
    const list = (await f.api().post('/lists', { name: 'A', code: 'a' }).expect(201)).body.data.id;
    for (const local of ['a', 'b'])
      await f
        .api()
        .post('/subscribers', { email: `${local}@auth.example`, lists: [list], confirmed: true })
        .expect(201);
    const id = await sendNow(f, [list]);
    await waitFor(async () => (await deliveryOf(f, id)).status === 'paused', 15_000);
    const message = (await f.api().get(`/messages/${id}`).expect(200)).body.data;
    expect(message.delivery).to.include({ failed: 0, queued: 2, sent: 0 });
    const sendId = (await deliveryOf(f, id)).id as number;
    const send = await f.engine.knex('message_sends').where({ id: sendId }).first('pause_reason');
    expect(send.pause_reason).to.match(/^mail cannot be handed over: .*Invalid username or password/);
    const rows = await f.engine.knex('send_recipients').where({ send_id: sendId }).select('attempts', 'state');
    expect(rows).to.deep.equal([
      { attempts: 0, state: 'queued' },
      { attempts: 0, state: 'queued' },
    ]);
    // Paused, it waits for someone, not for the relay: the pause reason says why, no wait is shown.
    expect(message.delivery).to.include({ waiting_since: null, waiting_reason: null });

    // Resumed with the relay gone: the send waits for it from the resume on, not from before the pause.
    const firstWait = (await f.engine.knex('message_sends').where({ id: sendId }).first('waiting_since')).waiting_since;
    expect(firstWait).to.not.equal(null);
    await new Promise<void>((resolve) => relay.close(() => resolve()));
    const resumedAt = Date.now() + later;
    await f.api().post(`/messages/${id}/resume`).expect(200);
    // Its recipients wait a minute before the next try.
    later += 2 * 60_000;
    const watchdog = campaignContainer(f.engine).resolve(SendWatchdog);
    await waitFor(async () => {
      await watchdog.tick(new Date(Date.now() + later));
      return (await deliveryOf(f, id)).waiting_since !== null;
    }, 15_000);
    const waiting = await deliveryOf(f, id);
    expect(waiting).to.include({ status: 'active', queued: 2, failed: 0 });
    expect(waiting.waiting_reason).to.match(/ECONNREFUSED/);
    expect(Date.parse(waiting.waiting_since)).to.be.at.least(resumedAt - 5);
  });
});

describeEachBackend('campaign: cancel and unsubscribe while a send runs', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink & { accepted: number };
  let list: number;
  let last: number;
  const COUNT = 1200;
  before(async () => {
    sink = await smtpSink({ delayMs: 3 });
    f = await campaignFixture(backend(), { SMTP_URL: sink.url });
    f.engine.startWorkers();
    list = await listOf(
      f,
      Array.from({ length: COUNT }, (_, i) => `p${i}@mid.test`),
    );
    last = (
      await f
        .api()
        .get(`/subscribers?search=${encodeURIComponent('email:p1199@mid.test')}`)
        .expect(200)
    ).body.data[0].id;
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  const draft = () => draftMessage(f);

  it('a subscriber who unsubscribes while the send runs gets nothing after that', async () => {
    const id = await draft();
    await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [list] })
      .expect(200);
    await waitFor(() => mailsOf(sink, id).length >= 50, 15_000);
    await f.api().post(`/subscribers/${last}/unsubscribe`).expect(200);
    await waitFor(async () => (await f.api().get(`/messages/${id}`).expect(200)).body.data.status === 'sent', 30_000);
    const done = (await f.api().get(`/messages/${id}`).expect(200)).body.data;
    expect(done.delivery).to.include({ recipients: COUNT, sent: COUNT - 1, skipped: 1 });
    expect(mailsOf(sink, id).filter((m) => m.to.includes('p1199@mid.test'))).to.have.length(0);
    expect(mailsOf(sink, id)).to.have.length(COUNT - 1);
  });

  it('cancel stops an active send promptly: nothing is handed to SMTP after the claims in flight', async () => {
    const id = await draft();
    await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [list] })
      .expect(200);
    await waitFor(() => mailsOf(sink, id).length >= 100, 15_000);
    await f.api().post(`/messages/${id}/cancel`).expect(200);
    const atCancel = mailsOf(sink, id).length;
    // Settled: no recipient is being sent any more.
    await waitFor(
      async () =>
        Number((await f.engine.knex('send_recipients').where({ state: 'sending' }).count({ n: '*' }))[0].n) === 0,
      15_000,
    );
    const message = (await f.api().get(`/messages/${id}`).expect(200)).body.data;
    expect(message.status).to.equal('cancelled');
    expect(message.delivery.status).to.equal('cancelled');
    const delivered = mailsOf(sink, id).length;
    expect(delivered).to.be.below(COUNT);
    expect(delivered - atCancel).to.be.at.most(4 * 50);
    expect(message.stats.sent).to.equal(delivered);
    // The subscriber who unsubscribed in the test before is no recipient.
    expect(message.delivery.recipients).to.equal(COUNT - 1);
    expect(message.delivery.queued).to.equal(COUNT - 1 - delivered);
  });
});

describeEachBackend('campaign: DKIM signing per sender domain', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let list: number;
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  before(async () => {
    sink = await smtpSink();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url }, undefined, {
      mail: {
        maxConnections: 2,
        dkim: [
          {
            domain: 'acme.test',
            selector: 'mail2026',
            privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
          },
        ],
      },
    });
    f.engine.startWorkers();
    list = (await f.api().post('/lists', { name: 'L', code: 'l' }).expect(201)).body.data.id;
    await f
      .api()
      .post('/subscribers', { email: 'ada@example.com', lists: [list], confirmed: true })
      .expect(201);
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  it('signs the mail of a domain with a key (it verifies with the public key), not the mail of others', async () => {
    const send = async (from: string) => {
      const id = (
        await f
          .api()
          .post('/messages', { name: 'D', subject: 'Signed', content_text: 'Body', from_email: from })
          .expect(201)
      ).body.data.id;
      await f
        .api()
        .post(`/messages/${id}/send`, { list_ids: [list] })
        .expect(200);
      await waitFor(async () => (await f.api().get(`/messages/${id}`).expect(200)).body.data.status === 'sent', 15_000);
      return mailsOf(sink, id)[0].raw;
    };
    const signed = await send('news@acme.test');
    const header = /^DKIM-Signature: ([\s\S]*?)\r?\n(?=\S)/m.exec(signed)![1].replace(/\s+/g, '');
    expect(header).to.include('d=acme.test;').and.include('s=mail2026;').and.include('a=rsa-sha256');
    // mailauth verifies it as a receiver would, the selector's DNS record answered with our public key.
    const record = `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`;
    const verified = await dkimVerify(Buffer.from(signed), {
      resolver: async (name: string) => {
        expect(name).to.equal('mail2026._domainkey.acme.test');
        return [[record]];
      },
    } as never);
    expect(verified.results.map((r) => r.status.result)).to.deep.equal(['pass']);
    // RFC 8058 section 4: both one-click unsubscribe headers are covered by the signature.
    const covered = (verified.results[0] as unknown as { signingHeaders: { keys: string } }).signingHeaders.keys
      .toLowerCase()
      .split(':')
      .map((key) => key.trim());
    expect(covered).to.include.members(['list-unsubscribe', 'list-unsubscribe-post', 'from', 'subject']);
    expect(signed).to.match(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r?$/m);
    const unsigned = await send('news@other.test');
    expect(unsigned).not.to.match(/^DKIM-Signature:/m);
  });
});

describeEachBackend('campaign: a send pauses when too many recipients fail, and resumes', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let list: number;
  let refusing = true;
  before(async () => {
    // The first 100 addresses are refused for good while `refusing`.
    sink = await smtpSink({ refuse: (a) => (refusing && /^bad\d+@/.test(a) ? 550 : null) });
    f = await campaignFixture(backend(), { SMTP_URL: sink.url }, undefined, {
      plugins: [
        {
          id: 'campaign',
          package: '@switchboard/plugin-campaign',
          options: { sending: { pauseFailureRate: 0.5, pauseMinimumTried: 20 } },
        },
      ],
    });
    f.engine.startWorkers();
    list = await listOf(f, [
      ...Array.from({ length: 100 }, (_, i) => `bad${i}@example.com`),
      ...Array.from({ length: 20 }, (_, i) => `good${i}@example.com`),
    ]);
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  it('pauses with a reason once half of 20 or more tried failed; resume sends the rest', async () => {
    const id = await sendNow(f, [list]);
    const delivery = () => deliveryOf(f, id);
    await waitFor(async () => (await delivery()).status === 'paused', 15_000);
    await waitFor(
      async () =>
        Number((await f.engine.knex('send_recipients').where({ state: 'sending' }).count({ n: '*' }))[0].n) === 0,
      15_000,
    );
    const paused = await delivery();
    expect(paused.pause_reason).to.match(/^50 of 50 recipients failed \(last: .*550/);
    expect(paused).to.include({ failed: 50, sent: 0, queued: 70 });
    expect((await f.api().get(`/messages/${id}`).expect(200)).body.data.status).to.equal('active');
    // The watchdog leaves a paused send alone.
    await campaignContainer(f.engine)
      .resolve(SendWatchdog)
      .tick(new Date(Date.now() + 31_000));
    expect((await delivery()).queued).to.equal(70);

    refusing = false;
    await f.api().post(`/messages/${id}/resume`).expect(200);
    await waitFor(async () => (await delivery()).status === 'sent', 15_000);
    expect(await delivery()).to.include({ failed: 50, sent: 70, queued: 0, pause_reason: null });
    await f.api().post(`/messages/${id}/resume`).expect(422);
  });
});

describeEachBackend('campaign: claims and sends that cannot go on', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let list: number;
  before(async () => {
    sink = await smtpSink();
    // No workers until a test starts them: the tests drive the store themselves first.
    f = await campaignFixture(backend(), { SMTP_URL: sink.url });
    list = await listOf(f, ['a@example.com', 'b@example.com']);
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });
  const draft = (fields: Record<string, unknown> = {}) => draftMessage(f, fields);
  const delivery = (id: number) => deliveryOf(f, id);
  /** A draft sent to the list (no worker sends it): its send, and the store to drive it with. */
  const sentToList = async () => {
    const id = await draft();
    const sendId: number = (
      await f
        .api()
        .post(`/messages/${id}/send`, { list_ids: [list] })
        .expect(200)
    ).body.data.id;
    return { id, sendId, store: campaignContainer(f.engine).resolve(SendStore) };
  };

  it('a claim given back by the watchdog no longer counts for the worker that lost it', async () => {
    const { id, sendId, store } = await sentToList();
    const send = (await store.get(sendId))!;
    const lost = (await store.claim(sendId, 0, 1e9))!;
    expect(lost.ids).to.have.length(2);
    expect(await store.releaseStaleClaims(sendId, new Date(Date.now() + 1000))).to.equal(2);
    const taken = (await store.claim(sendId, 0, 1e9))!;
    expect(taken.ids).to.deep.equal(lost.ids);
    const sent = (ids: number[]) => ids.map((r) => ({ id: r, state: 'sent' as const, mailId: `m${r}@x` }));
    await store.record(send, lost, sent(lost.ids));
    expect(await delivery(id)).to.include({ sent: 0, queued: 2 });
    await store.record(send, taken, sent(taken.ids));
    expect(await delivery(id)).to.include({ sent: 2, queued: 0 });
    expect((await f.api().get(`/messages/${id}`).expect(200)).body.data.stats.sent).to.equal(2);
  });

  it('queues ranges of RANGE_SIZE recipients read a page at a time: none left out or in two ranges at the pages edges', async () => {
    const { id, sendId, store } = await sentToList();
    // 25,001 more queued recipients (ids with gaps), a few sent ones between them: more than two pages of ids.
    const extra = Array.from({ length: 25_001 }, (_, i) => ({
      send_id: sendId,
      subscriber_id: 1_000_000 + i * 3,
      state: i % 1000 === 7 ? 'sent' : 'queued',
    }));
    // 400 rows a statement: SQLite takes at most 500 terms in knex's compound SELECT.
    for (let i = 0; i < extra.length; i += 400) await f.engine.knex('send_recipients').insert(extra.slice(i, i + 400));
    const queued = (
      await f.engine.knex('send_recipients').where({ send_id: sendId, state: 'queued' }).orderBy('subscriber_id')
    ).map((r) => Number(r.subscriber_id));
    const ranges: Array<{ from: number; to: number }> = [];
    for await (const range of store.queuedRanges(sendId)) ranges.push(range);
    expect(ranges).to.have.length(Math.ceil(queued.length / RANGE_SIZE));
    ranges.forEach((range, i) => {
      const inside = queued.filter((s) => s >= range.from && s < range.to);
      expect(inside[0]).to.equal(range.from);
      expect(inside).to.have.length(i < ranges.length - 1 ? RANGE_SIZE : queued.length - i * RANGE_SIZE);
      if (i) expect(range.from).to.equal(ranges[i - 1].to);
    });
    expect(ranges[ranges.length - 1].to).to.equal(queued[queued.length - 1] + 1);
    await f.api().post(`/messages/${id}/cancel`).expect(200);
  });

  it('a send whose mail cannot be composed any more pauses with the reason instead of retrying forever', async () => {
    const profile = (
      await f
        .api()
        .post('/sender-profiles', { name: 'P', from_name: 'Acme', from_email: 'hi@acme.test', is_default: true })
        .expect(201)
    ).body.data.id;
    const id = await draft({ from_email: null });
    await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [list] })
      .expect(200);
    await f.api().delete(`/sender-profiles/${profile}`).expect(200);
    f.engine.startWorkers();
    await waitFor(async () => (await delivery(id)).status === 'paused', 15_000);
    expect((await delivery(id)).pause_reason).to.match(/^The message cannot be composed: .*sender profile/);
    expect(sink.mails).to.have.length(0);
  });
});

describeEachBackend('campaign: the messages-per-second throttle', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let list: number;
  before(async () => {
    sink = await smtpSink();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url }, undefined, {
      mail: { maxConnections: 2, messagesPerSecond: 10, dkim: [] },
    });
    f.engine.startWorkers();
    list = await listOf(
      f,
      Array.from({ length: 25 }, (_, i) => `t${i}@throttle.test`),
    );
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  it('hands SMTP no more than mail.messagesPerSecond mails a second', async () => {
    const started = Date.now();
    const id = await sendNow(f, [list]);
    await waitFor(async () => (await deliveryOf(f, id)).status === 'sent', 15_000);
    expect(mailsOf(sink, id)).to.have.length(25);
    // 25 mails at 10 a second: the first 10 at once, then 10 a second later, the last 5 a second after.
    expect(Date.now() - started).to.be.at.least(1900);
  });
});
