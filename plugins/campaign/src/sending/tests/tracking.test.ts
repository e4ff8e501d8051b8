import { expect } from 'chai';
import request from 'supertest';
import { createTenant, describeEachBackend, smtpSink, SmtpSink, waitFor } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../shared/tests/support';
import { mailsOf } from '../../shared/tests/sending-support';

describeEachBackend('campaign: open and click tracking', (backend) => {
  let f: CampaignFixture;
  let sink: SmtpSink;
  let list: number;
  const ids: Record<string, number> = {};
  before(async () => {
    sink = await smtpSink();
    f = await campaignFixture(backend(), { SMTP_URL: sink.url, PUBLIC_URL: 'http://mail.test' });
    f.engine.startWorkers();
    list = (await f.api().post('/lists', { name: 'L', code: 'l' }).expect(201)).body.data.id;
    for (const email of ['ada@example.com', 'alan@example.com'])
      ids[email] = (
        await f
          .api()
          .post('/subscribers', { email, lists: [list], confirmed: true })
          .expect(201)
      ).body.data.id;
  });
  after(async () => {
    await f?.close();
    await sink?.close();
  });

  const html =
    '<html><body><p>Read <a href="https://acme.test/story?a=1&amp;b={{email}}">the story</a> and ' +
    "<a class='x' href='https://acme.test/other'>more</a> or <a href=\"mailto:hi@acme.test\">write</a>.</p></body></html>";
  const sendMessage = async (fields: Record<string, unknown>) => {
    const id = (
      await f
        .api()
        .post('/messages', { name: 'T', subject: 'S', content_html: html, from_email: 'a@acme.test', ...fields })
        .expect(201)
    ).body.data.id as number;
    await f
      .api()
      .post(`/messages/${id}/send`, { list_ids: [list] })
      .expect(200);
    await waitFor(async () => (await f.api().get(`/messages/${id}`).expect(200)).body.data.status === 'sent', 15_000);
    return id;
  };
  const htmlOf = async (id: number, to: string) => {
    const mail = mailsOf(sink, id).find((m) => m.to.includes(to))!;
    return String((await mail.parse()).html);
  };
  const local = (url: string) => url.replace('http://mail.test', '');
  const stats = async (id: number) => (await f.api().get(`/messages/${id}`).expect(200)).body.data;

  it('is off by default: links stay as written and there is no pixel', async () => {
    const id = await sendMessage({});
    const body = await htmlOf(id, 'ada@example.com');
    expect(body).to.include('href="https://acme.test/story?a=1&amp;b=ada@example.com"');
    expect(body).not.to.include('/api/campaign/t/');
    expect((await stats(id)).track_opens).to.equal(false);
  });

  it('counts every open and click and the mails opened and clicked, redirects to the link, and refuses a tampered link', async () => {
    const id = await sendMessage({ track_opens: true, track_clicks: true });
    const body = await htmlOf(id, 'ada@example.com');
    const pixel = /<img src="(http:\/\/mail\.test\/api\/campaign\/t\/o\?token=[^"]+)"/.exec(body)![1];
    const clicks = [...body.matchAll(/href=["'](http:\/\/mail\.test\/api\/campaign\/t\/c\?[^"']+)["']/g)].map((m) =>
      m[1].replace(/&amp;/g, '&'),
    );
    expect(clicks).to.have.length(2);
    expect(body).to.include('href="mailto:hi@acme.test"');
    expect(body).to.match(/href="http:\/\/mail\.test\/api\/campaign\/unsubscribe\?token=/);
    expect(body).to.match(/style="display:none"><\/body><\/html>$/);

    const gif = await request(f.server).get(local(pixel)).expect(200);
    expect(gif.headers['content-type']).to.equal('image/gif');
    await request(f.server).get(local(pixel)).expect(200);
    let now = await stats(id);
    // Each open counts (campaign spec §6); the rate is of the mails opened.
    expect(now.stats).to.include({ opened: 2, clicked: 0, unique_opened: 1, unique_clicked: 0 });
    expect(now.open_rate).to.equal(50);

    const story = await request(f.server).get(local(clicks[0])).expect(302);
    expect(story.headers.location).to.equal('https://acme.test/story?a=1&b=ada@example.com');
    // Its body is text/html as documented, whatever the client accepts.
    const asJson = await request(f.server).get(local(clicks[1])).set('Accept', 'application/json').expect(302);
    expect(asJson.headers['content-type']).to.match(/^text\/html/);
    // Alan clicks without loading images: a click is an open too.
    const alan = await htmlOf(id, 'alan@example.com');
    const alanClick = /href="(http:\/\/mail\.test\/api\/campaign\/t\/c\?[^"]+)"/.exec(alan)![1].replace(/&amp;/g, '&');
    await request(f.server).get(local(alanClick)).expect(302);
    now = await stats(id);
    // Alan's click opened his mail (unique_opened) without an open event (opened).
    expect(now.stats).to.include({ sent: 2, opened: 2, clicked: 3, unique_opened: 2, unique_clicked: 2 });
    expect(now.click_rate).to.equal(100);
    // The timeline counts what the summary counts: our sends and tracked opens and clicks too.
    const { summary, timeline } = (await f.api().get(`/messages/${id}/stats`).expect(200)).body.data;
    expect(summary).to.include({ sent: 2, opened: 2, clicked: 3, unique_opened: 2, unique_clicked: 2 });
    for (const period of ['hourly', 'daily'])
      expect(
        Object.fromEntries(
          ['sent', 'opened', 'clicked'].map((e) => [e, timeline[period].reduce((n: number, t: any) => n + t[e], 0)]),
        ),
        period,
      ).to.deep.equal({ sent: 2, opened: 2, clicked: 3 });
    const ada = (await f.api().get(`/subscribers/${ids['ada@example.com']}`).expect(200)).body.data;
    expect(ada).to.include({ messages_opened: 1, messages_clicked: 1 });
    // Analytics count the same first opens and clicks, and both readers as active.
    const performance = (await f.api().get('/analytics/performance?period=7d').expect(200)).body.data;
    expect(performance.totals).to.include({ opened: 2, clicked: 2 });
    const engagement = (await f.api().get('/analytics/engagement').expect(200)).body.data;
    expect(engagement.active_last_30_days).to.equal(2);

    // Another target under the same signature, or a changed signature: 404, nothing counted.
    const elsewhere = clicks[0].replace(/u=[^&]+/, `u=${encodeURIComponent('https://evil.test/')}`);
    await request(f.server).get(local(elsewhere)).expect(404);
    await request(f.server)
      .get(local(pixel.slice(0, -1) + (pixel.endsWith('A') ? 'B' : 'A')))
      .expect(404);
    await request(f.server).get('/api/campaign/t/c?token=1.2.3.abc&u=https%3A%2F%2Fevil.test%2F').expect(404);
    expect((await stats(id)).stats).to.include({ opened: 2, clicked: 3, unique_opened: 2, unique_clicked: 2 });
  });

  it('tracks a link written HTTPS://, leaves one over 2,048 characters as written, and leads on once its message is deleted', async () => {
    const long = `https://acme.test/${'x'.repeat(2100)}`;
    const id = await sendMessage({
      track_opens: true,
      track_clicks: true,
      content_html: `<p><a href="HTTPS://acme.test/Loud">loud</a> <a href="${long}">long</a></p>`,
    });
    const body = await htmlOf(id, 'ada@example.com');
    expect(body).to.include(`href="${long}"`);
    const [loud] = [...body.matchAll(/href="(http:\/\/mail\.test\/api\/campaign\/t\/c\?[^"]+)"/g)].map((m) =>
      m[1].replace(/&amp;/g, '&'),
    );
    const pixel = /<img src="(http:\/\/mail\.test\/api\/campaign\/t\/o\?token=[^"]+)"/.exec(body)![1];
    expect((await request(f.server).get(local(loud)).expect(302)).headers.location).to.equal('https://acme.test/Loud');
    expect((await stats(id)).stats).to.include({ clicked: 1, unique_clicked: 1 });

    // Deleted once sent: the mail's link still leads on and its pixel still answers, counting nothing.
    await f.api().delete(`/messages/${id}`).expect(200);
    expect((await request(f.server).get(local(loud)).expect(302)).headers.location).to.equal('https://acme.test/Loud');
    await request(f.server).get(local(pixel)).expect(200);
  });

  it('counts every open and click, and one mail opened and clicked, when a mail is opened and clicked many times at once', async () => {
    const id = await sendMessage({ track_opens: true, track_clicks: true });
    const body = await htmlOf(id, 'alan@example.com');
    const pixel = /<img src="(http:\/\/mail\.test\/api\/campaign\/t\/o\?token=[^"]+)"/.exec(body)![1];
    const click = /href="(http:\/\/mail\.test\/api\/campaign\/t\/c\?[^"]+)"/.exec(body)![1].replace(/&amp;/g, '&');
    // Two mail clients, a proxy and the reader: the same mail's pixel and link at once, each in its transaction.
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        request(f.server)
          .get(local(i % 2 ? pixel : click))
          .expect(i % 2 ? 200 : 302),
      ),
    );
    expect((await stats(id)).stats).to.include({ sent: 2, opened: 6, clicked: 6, unique_opened: 1, unique_clicked: 1 });
    // Each recorded with its mail, for a rebuild to count.
    const recorded = await f.engine
      .knex('tracked_events')
      .whereIn('send_id', f.engine.knex('message_sends').where({ message_id: id }).select('id'))
      .groupBy('event_type')
      .select('event_type', f.engine.knex.raw('count(*) as n'));
    expect(Object.fromEntries(recorded.map((r: any) => [r.event_type, Number(r.n)]))).to.deep.equal({
      opened: 6,
      clicked: 6,
    });
    const alan = (await f.api().get(`/subscribers/${ids['alan@example.com']}`).expect(200)).body.data;
    expect(alan).to.include({ messages_opened: 2, messages_clicked: 2 });
  });

  it('counts a subscriber whose two mails are opened at once as engaged once, and forgets her when she is deleted', async () => {
    const pair = (await f.api().post('/lists', { name: 'Pair', code: 'pair' }).expect(201)).body.data.id;
    const grace = (
      await f
        .api()
        .post('/subscribers', { email: 'grace@example.com', lists: [pair], confirmed: true })
        .expect(201)
    ).body.data.id;
    const sendToPair = async () => {
      const fields = { name: 'P', subject: 'S', content_html: html, from_email: 'a@acme.test', track_opens: true };
      const id = (await f.api().post('/messages', fields).expect(201)).body.data.id as number;
      await f
        .api()
        .post(`/messages/${id}/send`, { list_ids: [pair] })
        .expect(200);
      await waitFor(async () => (await stats(id)).status === 'sent', 15_000);
      return id;
    };
    const pixelOf = async (id: number) =>
      local(
        /<img src="(http:\/\/mail\.test\/api\/campaign\/t\/o\?token=[^"]+)"/.exec(
          await htmlOf(id, 'grace@example.com'),
        )![1],
      );
    const pixels = [await pixelOf(await sendToPair()), await pixelOf(await sendToPair())];
    const active = async () =>
      (await f.api().get('/analytics/engagement').expect(200)).body.data.active_last_30_days as number;
    const before = await active();

    // Her first engagement, from two mails at once: two runs may each find no engagement row of hers.
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        request(f.server)
          .get(pixels[i % 2])
          .expect(200),
      ),
    );
    expect((await f.api().get(`/subscribers/${grace}`).expect(200)).body.data).to.include({
      messages_opened: 2,
      messages_clicked: 0,
    });
    expect(await active()).to.equal(before + 1);

    await f.api().delete(`/subscribers/${grace}`).expect(200);
    expect(await active()).to.equal(before);
    expect(await f.engine.knex('subscriber_engagement').where({ subscriber_id: grace }).first()).to.equal(undefined);
  });

  it("follows the organization's message defaults when a new message does not say", async () => {
    const defaults = await f.api().get('/message-defaults').expect(200);
    expect(defaults.body.data).to.deep.equal({ track_opens: false, track_clicks: false });
    const changed = await f.api().put('/message-defaults', { track_clicks: true }).expect(200);
    expect(changed.body.data).to.deep.equal({ track_opens: false, track_clicks: true });
    expect((await f.api().get('/message-defaults').expect(200)).body.data.track_clicks).to.equal(true);
    const other = await createTenant(f.engine);
    expect((await f.api(other).get('/message-defaults').expect(200)).body.data.track_clicks).to.equal(false);
    await f.api().put('/message-defaults', {}).expect(422);
    await f.api().put('/message-defaults', { track_opens: 'yes' }).expect(422);

    const byDefault = await sendMessage({});
    expect(await stats(byDefault)).to.include({ track_opens: false, track_clicks: true });
    const body = await htmlOf(byDefault, 'ada@example.com');
    expect(body).to.include('/api/campaign/t/c?token=');
    expect(body).not.to.include('/api/campaign/t/o?token=');
    // A message that says otherwise keeps its own choice, and a change of defaults leaves messages as they are.
    const ownChoice = await sendMessage({ track_clicks: false });
    expect((await stats(ownChoice)).track_clicks).to.equal(false);
    await f.api().put('/message-defaults', { track_clicks: false }).expect(200);
    expect((await stats(byDefault)).track_clicks).to.equal(true);
  });
});
