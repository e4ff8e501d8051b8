import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import nodemailer from 'nodemailer';
import { simpleParser, ParsedMail } from 'mailparser';
import { createMailer, MailMessage, nodemailerMail } from '../src/mail/mailer';
import { writeMime } from '../src/mail/mime-writer';
import { smtpSink } from '../src/testing/smtp-sink';

const campaignLike: MailMessage = {
  from: { name: 'Acme', address: 'news@acme.example' },
  to: 's12345@bench.example',
  subject: 'The Acme weekly for Name12345',
  messageId: '<1.12345.1@acme.example>',
  html: `<html><body>${'<p>Hello Name12345, <a href="https://acme.example/s?a=1&amp;b=2">read</a> it.</p>\n'.repeat(40)}</body></html>`,
  text: 'Hello Name12345\n\n.a line that starts with a dot\n' + 'word '.repeat(60),
  headers: {
    'X-SMTPAPI': '{"unique_args":{"campaign_message_id":"1"}}',
    'X-PM-Metadata-campaign_message_id': '1',
    'List-Unsubscribe': '<https://acme.example/u?token=1.2.3>',
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  },
};

const cases: Array<[string, MailMessage]> = [
  ['a campaign mail (text and HTML, provider headers)', campaignLike],
  ['text only, short ASCII lines (7bit)', { ...campaignLike, html: undefined, text: 'Hi!\nBye.' }],
  ['HTML only', { ...campaignLike, text: undefined }],
  [
    'accents in the subject and bodies, a reply-to, a name to quote',
    {
      ...campaignLike,
      from: { name: 'Acme, Inc. "News"', address: 'news@acme.example' },
      replyTo: 'help@acme.example',
      subject: 'Grüße an José: façade, naïve, résumé',
      text: 'Grüße an José, wie geht es?\r\nÇa va très bien.',
      html: '<p>Grüße an José</p>',
    },
  ],
  [
    'mostly non-Latin bodies and a long subject',
    {
      ...campaignLike,
      subject: `Новости недели для Анны: ${'очень длинная тема '.repeat(6)}`,
      text: 'Здравствуйте, Анна! 你好，世界。'.repeat(20),
      html: `<p>${'Здравствуйте, Анна! 你好，世界。'.repeat(20)}</p>`,
    },
  ],
  ['a long ASCII subject', { ...campaignLike, subject: `Weekly ${'news and more '.repeat(12)}` }],
  [
    "a subject with a word too long for a line (a merge tag's value)",
    { ...campaignLike, subject: `Hi ${'a'.repeat(4700)}!` },
  ],
];

/** What a mail client reads: the fields, the bodies and the headers a provider reads back. */
function readable(mail: ParsedMail) {
  return {
    from: mail.from?.value,
    to: (Array.isArray(mail.to) ? mail.to : [mail.to]).map((a) => a?.value),
    replyTo: mail.replyTo?.value,
    subject: mail.subject,
    messageId: mail.messageId,
    text: mail.text,
    html: mail.html,
    headers: ['x-smtpapi', 'x-pm-metadata-campaign_message_id', 'list-unsubscribe-post'].map((h) =>
      mail.headers.get(h),
    ),
    listUnsubscribe: mail.headers.get('list')?.toString(),
  };
}

async function nodemailerComposed(message: MailMessage): Promise<string> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  return (await transport.sendMail(nodemailerMail(message, []))).message.toString();
}

describe('the MIME writer of the SMTP mailer', () => {
  for (const [name, message] of cases) {
    it(`writes ${name} as nodemailer composes it, and the relay receives it`, async () => {
      const written = writeMime(message, new Date());
      expect(written, 'written, not left to nodemailer').to.not.equal(null);
      expect(written!.envelope).to.deep.equal({
        from: typeof message.from === 'string' ? message.from : message.from.address,
        to: [message.to],
      });
      const expected = readable(await simpleParser(await nodemailerComposed(message)));
      expect(readable(await simpleParser(written!.raw))).to.deep.equal(expected);
      for (const line of written!.raw.split('\r\n')) expect(line.length).to.be.at.most(998);

      const sink = await smtpSink();
      const mailer = createMailer({ smtpUrl: sink.url, outboxDir: os.tmpdir() });
      try {
        expect((await mailer.send(message)).messageId).to.equal(message.messageId);
        expect(readable(await sink.mails[0].parse())).to.deep.equal(expected);
        expect(sink.mails[0].to).to.deep.equal([message.to]);
      } finally {
        mailer.close();
        await sink.close();
      }
    });
  }

  it("a subject holding text that reads as an encoded-word (a merge tag's value): read back as written by both writers", async () => {
    const subject = 'Hi =?utf-8?Q?=0D=0ABcc:_evil@x.test?= and =?utf-8?B?SGFjaw==?=';
    const message = { ...campaignLike, subject };
    const written = writeMime(message, new Date());
    expect((await simpleParser(written!.raw)).subject).to.equal(subject);
    expect((await simpleParser(await nodemailerComposed(message))).subject).to.equal(subject);
    const outbox = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-outbox-'));
    const mailer = createMailer({ outboxDir: outbox });
    try {
      await mailer.send(message);
      const [file] = fs.readdirSync(outbox);
      expect((await simpleParser(fs.readFileSync(path.join(outbox, file)))).subject).to.equal(subject);
    } finally {
      mailer.close();
      fs.rmSync(outbox, { recursive: true, force: true });
    }
  });

  it('a subject word too long for a line: every line within 998 octets, the subject read back whole, nodemailer composing too', async () => {
    const subject = `Hallo ${'b'.repeat(3000)} und ${'ü'.repeat(1000)}`;
    const message = { ...campaignLike, from: { name: 'Société Générale', address: 'news@acme.example' }, subject };
    expect(writeMime(message, new Date())).to.equal(null);
    const raw = await nodemailerComposed(message);
    expect(raw.split(/\r?\n/).filter((line) => line.length > 998)).to.deep.equal([]);
    expect((await simpleParser(raw)).subject).to.equal(subject);
  });

  it('leaves to nodemailer what it does not write: a name or an address to encode, no Message-ID, a header to fold', async () => {
    const others: MailMessage[] = [
      { ...campaignLike, from: { name: 'Société Générale', address: 'news@acme.example' } },
      { ...campaignLike, to: 'josé@bücher.example' },
      { ...campaignLike, messageId: undefined },
      { ...campaignLike, headers: { 'X-Long': 'x'.repeat(1200) } },
      { ...campaignLike, headers: { 'X-Line': 'one\r\nBcc: someone@else.example' } },
    ];
    const sink = await smtpSink();
    const mailer = createMailer({ smtpUrl: sink.url, outboxDir: os.tmpdir() });
    try {
      for (const message of others) {
        expect(writeMime(message, new Date())).to.equal(null);
        await mailer.send(message);
      }
      expect(sink.mails.map((m) => m.to[0])).to.deep.equal(others.map((m) => m.to));
      expect((await sink.mails[4].parse()).bcc).to.equal(undefined);
    } finally {
      mailer.close();
      await sink.close();
    }
  });
});
