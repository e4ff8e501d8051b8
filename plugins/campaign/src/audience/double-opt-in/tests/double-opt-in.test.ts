import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { simpleParser } from 'mailparser';
import request from 'supertest';
import { describeEachBackend, smtpSink, waitFor } from '@switchboard/core/testing';
import { campaignContainer, campaignFixture, CampaignFixture } from '../../../shared/tests/support';
import { SubscriberWriter } from '../../subscribers';
import { ConfirmationSweep } from '../confirmation-sweep';
import { ConfirmationMails } from '../confirmation-mails';

describeEachBackend('campaign: double opt-in', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend());
    f.engine.startWorkers();
  });
  after(() => f.close());

  const outbox = () =>
    fs.existsSync(f.engine.config.outboxDir)
      ? fs.readdirSync(f.engine.config.outboxDir).filter((name) => name.endsWith('.eml'))
      : [];

  /** The confirmation link of the mail sent to `email` (decoded from quoted-printable). */
  const confirmationLink = (email: string): string => {
    const file = outbox()
      .sort()
      .find((name) => fs.readFileSync(path.join(f.engine.config.outboxDir, name), 'utf8').includes(email))!;
    const mail = fs
      .readFileSync(path.join(f.engine.config.outboxDir, file), 'utf8')
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
    return /(\/api\/campaign\/confirm\?token=[A-Za-z0-9._%-]+)/.exec(mail)![1];
  };

  it('sends a signed confirmation link to an unconfirmed subscriber; its page confirms them on POST', async () => {
    await f.api().post('/sender-profiles', {
      name: 'News',
      from_name: 'Acme News',
      from_email: 'news@acme.example',
      is_default: true,
    });
    const before = outbox().length;
    const res = await f
      .api()
      .post('/subscribers', { email: 'optin@example.com', first_name: 'Opti', confirmed: false })
      .expect(201);
    expect(res.body.data).to.deep.include({ status: 'unconfirmed', confirmation_sent: true });
    await waitFor(() => outbox().length === before + 1, 10_000);
    const link = confirmationLink('optin@example.com');

    const tampered = link.replace(/token=(\d+)/, (_, n) => `token=${Number(n) + 1}`);
    const bad = await request(f.server).get(tampered).expect(404);
    expect(bad.text).to.include('Link not valid');
    await request(f.server).post(tampered).expect(404);

    // Opening the link (as a mail scanner would) shows a page and confirms nothing; its form's POST confirms.
    const shown = await request(f.server).get(link).expect(200);
    expect(shown.headers['content-type']).to.match(/^text\/html/);
    expect(shown.text).to.include('optin@example.com').and.include('<form method="post"');
    const action = /action="([^"]+)"/.exec(shown.text)![1].replace(/&amp;/g, '&');
    expect((await f.api().get(`/subscribers/${res.body.data.id}`).expect(200)).body.data.status).to.equal(
      'unconfirmed',
    );
    const ok = await request(f.server).post(action).expect(200);
    expect(ok.text).to.include('Subscription confirmed');
    await request(f.server)
      .get(link)
      .expect(200, /Subscription confirmed/);
    const subscriber = (await f.api().get(`/subscribers/${res.body.data.id}`).expect(200)).body.data;
    expect(subscriber.status).to.equal('active');
    expect(subscriber.confirmed_at).to.be.a('string');
    // Unsubscribed since: the old link changes nothing, and says so.
    await f.api().post(`/subscribers/${res.body.data.id}/unsubscribe`, {}).expect(200);
    await request(f.server)
      .get(link)
      .expect(200, /Nothing to confirm/);
    await request(f.server)
      .post(link)
      .expect(200, /this link changes nothing/);
    expect((await f.api().get(`/subscribers/${res.body.data.id}`).expect(200)).body.data.status).to.equal(
      'unsubscribed',
    );
  });

  it('confirms nobody unsubscribed between reading the link and confirming it: the unsubscribe stands', async () => {
    const id = (await f.api().post('/subscribers', { email: 'between@example.com', confirmed: false }).expect(201)).body
      .data.id;
    await waitFor(
      () =>
        outbox().some((name) =>
          fs.readFileSync(path.join(f.engine.config.outboxDir, name), 'utf8').includes('between@example.com'),
        ),
      10_000,
    );
    const token = new URLSearchParams(confirmationLink('between@example.com').split('?')[1]).get('token')!;
    // The subscriber unsubscribes right after the confirmation read the status (MariaDB met it for real).
    const mails = campaignContainer(f.engine).resolve(ConfirmationMails);
    const describe = mails.describe.bind(mails);
    mails.describe = async (t: string) => {
      const read = await describe(t);
      await f.api().post(`/subscribers/${id}/unsubscribe`, { reason: 'changed my mind' }).expect(200);
      return read;
    };
    try {
      expect(await mails.confirm(token)).to.deep.equal({ email: 'between@example.com', status: 'unsubscribed' });
    } finally {
      mails.describe = describe;
    }
    const row = (await f.api().get(`/subscribers/${id}`).expect(200)).body.data;
    expect(row).to.include({ status: 'unsubscribed', confirmed_at: null });
  });

  it('refuses a link whose signature differs in any character, the last one included', async () => {
    const before = outbox().length;
    await f.api().post('/subscribers', { email: 'malleable@example.com', confirmed: false }).expect(201);
    await waitFor(() => outbox().length === before + 1, 10_000);
    const link = confirmationLink('malleable@example.com');
    const base64url = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = link[link.length - 1];
    for (const c of base64url.replace(last, '')) {
      const bad = await request(f.server).post(link.slice(0, -1) + c);
      expect(bad.status, `last character ${last} -> ${c}`).to.equal(404);
    }
    await request(f.server)
      .post(link.replace(/token=(\d+)/, 'token=0$1'))
      .expect(404);
    await request(f.server)
      .post(link)
      .expect(200, /Subscription confirmed/);
  });

  it('queues again a confirmation mail whose job was lost, from the row recorded with the subscriber', async () => {
    const due = () => f.engine.knex('confirmation_mails_due').count({ n: '*' }).first();
    const sweep = campaignContainer(f.engine).resolve(ConfirmationSweep);
    // Through the API: the job is queued, the mail sent, and the row forgotten.
    const before = outbox().length;
    await f.api().post('/subscribers', { email: 'queued@example.com', confirmed: false }).expect(201);
    await waitFor(() => outbox().length === before + 1, 10_000);
    await waitFor(async () => Number((await due())!.n) === 0, 10_000);

    // Committed, but its job never queued (the process stopped, Redis came back empty): only the row is left.
    const writer = campaignContainer(f.engine).resolve(SubscriberWriter);
    const lost = await writer.create(f.tenant.organizationId, { email: 'lost@example.com', confirmed: false });
    expect(Number((await due())!.n)).to.equal(1);
    const now = new Date();
    expect(await sweep.run(now), 'a job queued a moment ago is left to its worker').to.equal(0);
    expect(await sweep.run(new Date(now.getTime() + 2 * 60_000 + 1000))).to.equal(1);
    await waitFor(() => outbox().length === before + 2, 10_000);
    expect(confirmationLink('lost@example.com')).to.match(/confirm\?token=/);
    await waitFor(async () => Number((await due())!.n) === 0, 10_000);
    expect(await sweep.run(new Date(now.getTime() + 10 * 60_000))).to.equal(0);
    expect((await f.api().get(`/subscribers/${lost.id}`).expect(200)).body.data.status).to.equal('unconfirmed');
  });

  it('forgets a confirmation mail the relay refuses for good (an unknown mailbox); one refused for now stays due', async () => {
    const sink = await smtpSink({
      refuse: (address) => ({ 'gone@example.com': 550, 'later@example.com': 451 })[address] ?? null,
    });
    // Its own engine on the same database, mailing through the sink; no workers (the mails are sent here).
    const g = await campaignFixture(backend(), { SMTP_URL: sink.url });
    try {
      const writer = campaignContainer(g.engine).resolve(SubscriberWriter);
      const mails = campaignContainer(g.engine).resolve(ConfirmationMails);
      const due = (id: number) => g.engine.knex('confirmation_mails_due').where({ subscriber_id: id }).first('due_at');
      const gone = await writer.create(g.tenant.organizationId, { email: 'gone@example.com', confirmed: false });
      // Asked every 2 minutes for a day until session 36 (each try a refusal the relay counts against us).
      await mails.send({ organizationId: g.tenant.organizationId, subscriberId: gone.id });
      expect(await due(gone.id)).to.equal(undefined);
      const later = await writer.create(g.tenant.organizationId, { email: 'later@example.com', confirmed: false });
      const refused = await mails
        .send({ organizationId: g.tenant.organizationId, subscriberId: later.id })
        .catch((err: unknown) => err);
      expect(refused).to.have.property('responseCode', 451);
      expect(await due(later.id)).to.not.equal(undefined);
      expect(sink.mails).to.have.length(0);
    } finally {
      await g.close();
      await sink.close();
    }
  });

  it('is from the default sender alone, its name as written (quotes, commas), its Message-ID on the PUBLIC_URL host', async () => {
    const name = 'Team" <ceo@bank.example>, "Acme, Inc. \u{1F680}';
    await f
      .api()
      .post('/sender-profiles', { name: 'Odd', from_name: name, from_email: 'odd@acme.example', is_default: true })
      .expect(201);
    const before = outbox().length;
    const id = (await f.api().post('/subscribers', { email: 'quoted@example.com', confirmed: false }).expect(201)).body
      .data.id;
    await waitFor(() => outbox().length === before + 1, 10_000);
    const file = outbox().find((n) =>
      fs.readFileSync(path.join(f.engine.config.outboxDir, n), 'utf8').includes('quoted@'),
    )!;
    const mail = await simpleParser(fs.readFileSync(path.join(f.engine.config.outboxDir, file)));
    expect(mail.from!.value).to.deep.equal([{ address: 'odd@acme.example', name }]);
    const host = new URL(f.engine.config.publicUrl).hostname.replace(/\./g, '\\.');
    expect(mail.messageId).to.match(new RegExp(`^<confirm\\.${id}\\.\\d+@${host}>$`));
  });
});
