import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import {
  createMailer,
  DEFAULT_SEND_TIMEOUT_MS,
  isHandoverUnavailable,
  isPermanentMailError,
  isRelayLoginRefused,
  relayIdOf,
  SMTP_TIMEOUTS,
} from '../src/mail/mailer';
import { smtpSink } from '../src/testing/smtp-sink';
import { loadConfig } from '../src/config/load-config';
import { DEFAULT_OUTBOX_KEEP, writeWhole } from '../src/mail/outbox';
import { stallingSmtp } from '../src/testing/stalling-smtp';
import { waitFor } from '../src/testing/wait';

describe('mailer without SMTP_URL', () => {
  it('writes each mail as an .eml file in the outbox folder', async () => {
    const outboxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-outbox-'));
    const mailer = createMailer({ outboxDir });
    try {
      const { messageId } = await mailer.send({
        from: 'news@example.com',
        to: 'ada@example.com',
        subject: 'Hello Ada',
        text: 'Hi!',
        headers: { 'X-Switchboard-Message': '7' },
      });
      const files = fs.readdirSync(outboxDir);
      expect(files).to.have.length(1);
      expect(files[0]).to.match(/\.eml$/);
      const eml = fs.readFileSync(path.join(outboxDir, files[0]), 'utf8');
      expect(eml)
        .to.contain('Subject: Hello Ada')
        .and.contain('To: ada@example.com')
        .and.contain('X-Switchboard-Message: 7');
      expect(eml).to.contain(messageId);
      // As it would go on the wire (RFC 5322 2.1): CRLF line ends, so a DKIM signature verifies on the file itself.
      expect(eml.split('\r\n').length).to.be.greaterThan(5);
      expect(eml.replace(/\r\n/g, '')).to.not.match(/[\r\n]/);
    } finally {
      mailer.close();
      fs.rmSync(outboxDir, { recursive: true, force: true });
    }
  });
});

describe('the outbox (OUTBOX_KEEP)', () => {
  const subjects = (dir: string) =>
    fs
      .readdirSync(dir)
      .filter((name) => name.endsWith('.eml'))
      .sort()
      .map((name) => /^Subject: (.*)$/m.exec(fs.readFileSync(path.join(dir, name), 'utf8'))?.[1]);
  const sendAll = async (mailer: ReturnType<typeof createMailer>, names: string[]) => {
    for (const subject of names) await mailer.send({ from: 'a@example.com', to: 'b@example.com', subject, text: 'T' });
  };

  it('keeps the newest mails, older ones written before it started included; other files stay', async () => {
    const outboxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-outbox-'));
    // An earlier run's mails (named as the outbox names them, by time) and a file of someone else's.
    for (const [i, name] of ['2020-01-01T00-00-00-000Z-<a@x>.eml', '2020-01-02T00-00-00-000Z-<b@x>.eml'].entries())
      fs.writeFileSync(path.join(outboxDir, name), `Subject: old ${i}\r\n\r\nT`);
    fs.writeFileSync(path.join(outboxDir, 'notes.txt'), 'mine');
    const mailer = createMailer({ outboxDir, outboxKeep: 3 });
    try {
      await sendAll(mailer, ['one']);
      // Three kept: both old ones and the new one.
      expect(subjects(outboxDir)).to.deep.equal(['old 0', 'old 1', 'one']);
      await sendAll(mailer, ['two', 'three', 'four']);
      expect(subjects(outboxDir)).to.deep.equal(['two', 'three', 'four']);
      expect(fs.existsSync(path.join(outboxDir, 'notes.txt'))).to.equal(true);
    } finally {
      mailer.close();
      fs.rmSync(outboxDir, { recursive: true, force: true });
    }
  });

  it('keeps every mail with OUTBOX_KEEP=0, and reads it from the environment (a bad value stops start-up)', async () => {
    const outboxDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-outbox-'));
    const mailer = createMailer({ outboxDir, outboxKeep: 0 });
    try {
      await sendAll(mailer, ['a', 'b', 'c', 'd']);
      expect(subjects(outboxDir)).to.deep.equal(['a', 'b', 'c', 'd']);
    } finally {
      mailer.close();
      fs.rmSync(outboxDir, { recursive: true, force: true });
    }
    expect(loadConfig({ env: { OUTBOX_KEEP: '0' } }).outboxKeep).to.equal(0);
    expect(loadConfig({ env: {} }).outboxKeep).to.equal(DEFAULT_OUTBOX_KEEP);
    expect(() => loadConfig({ env: { OUTBOX_KEEP: '-1' } })).to.throw('OUTBOX_KEEP must be a whole number');
  });
});

describe('mailer over SMTP', () => {
  it('returns the id the relay named in its answer, and none when it named none', async () => {
    let answer = 'Ok: queued as 4C1F3A0E21';
    const sink = await smtpSink({ answer: () => answer });
    const mailer = createMailer({ smtpUrl: sink.url, outboxDir: os.tmpdir() });
    const mail = { from: 'news@example.com', to: 'ada@example.com', subject: 'S', text: 'T' };
    try {
      expect((await mailer.send(mail)).relayId).to.equal('4C1F3A0E21');
      answer = 'OK: message queued';
      const plain = await mailer.send(mail);
      expect(plain).to.not.have.property('relayId');
      expect(plain.messageId).to.match(/^<.+@.+>$/);
      expect(sink.mails).to.have.length(2);
    } finally {
      mailer.close();
      await sink.close();
    }
  });

  it('reads relay ids of the common answers', () => {
    expect(relayIdOf('250 2.0.0 Ok: queued as 4C1F3A0E21')).to.equal('4C1F3A0E21');
    expect(relayIdOf('250 Ok: queued as <14c5d75ce93.dfd.64b469@ismtpd-555>')).to.equal(
      '14c5d75ce93.dfd.64b469@ismtpd-555',
    );
    expect(relayIdOf('250 Ok 0100018b9c4e5f6a-1b2c3d4e-5f60-4a1b-9c8d-7e6f5a4b3c2d-000000')).to.equal(
      '0100018b9c4e5f6a-1b2c3d4e-5f60-4a1b-9c8d-7e6f5a4b3c2d-000000',
    );
    expect(relayIdOf('250 Great success')).to.equal(undefined);
    expect(relayIdOf('250 OK: message queued')).to.equal(undefined);
    expect(relayIdOf('')).to.equal(undefined);
  });
});

describe('mailer over SMTP that hangs', () => {
  for (const kind of ['no-greeting', 'silent', 'trickle'] as const) {
    it(`gives up on a relay that ${kind === 'trickle' ? 'answers a byte at a time' : `is ${kind}`} at its time limit`, async () => {
      const relay = await stallingSmtp({ kinds: [kind], trickleEveryMs: 100 });
      const mailer = createMailer({ smtpUrl: relay.url, outboxDir: os.tmpdir(), sendTimeoutMs: 1000 });
      const started = Date.now();
      try {
        const failure = await mailer
          .send({ from: 'news@example.com', to: 'ada@example.com', subject: 'S', text: 'T' })
          .then(
            () => null,
            (err: Error) => err,
          );
        expect(failure, 'the send fails').to.be.instanceOf(Error);
        expect(Date.now() - started).to.be.within(900, 3000);
        // Transient: the mail is tried again later, not failed for good.
        expect(isPermanentMailError(failure)).to.equal(false);
        // Closed too: at once, or after nodemailer's 5 s wait for the server to close its side.
        await waitFor(() => relay.connections.every((c) => c.closedAt !== null), 7000);
      } finally {
        mailer.close();
        await relay.close();
      }
    }).timeout(10_000);
  }

  it('has time limits well below nodemailer defaults (2 minutes to connect, 10 of silence)', () => {
    expect(SMTP_TIMEOUTS.connectionTimeout).to.be.at.most(10_000);
    expect(SMTP_TIMEOUTS.greetingTimeout).to.be.at.most(10_000);
    expect(SMTP_TIMEOUTS.socketTimeout).to.be.at.most(30_000);
    expect(DEFAULT_SEND_TIMEOUT_MS).to.be.at.most(60_000);
  });
});

describe('the outbox, writing a mail', () => {
  it('removes the part it wrote when the mail cannot be put in place, and says why', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sb-outbox-'));
    try {
      // The name taken by a folder that is not empty: the rename fails, as a write on a full disk would.
      fs.mkdirSync(path.join(dir, 'taken.eml'));
      fs.writeFileSync(path.join(dir, 'taken.eml', 'x'), 'x');
      const failed = await writeWhole(
        path.join(dir, '.taken.eml.partial'),
        path.join(dir, 'taken.eml'),
        Buffer.from('mail'),
      )
        .then(() => null)
        .catch((err: NodeJS.ErrnoException) => err.code);
      expect(failed).to.be.a('string');
      expect(fs.readdirSync(dir)).to.deep.equal(['taken.eml']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a mail not handed over at all', () => {
  it('is told apart from a refusal or a failure during the mail: relay out of reach, login refused, outbox disk full', () => {
    const err = (fields: Record<string, unknown>) => Object.assign(new Error('x'), fields);
    for (const unavailable of [
      err({ code: 'ESOCKET', command: 'CONN', syscall: 'connect', errno: -111 }),
      err({ code: 'EDNS', syscall: 'getaddrinfo' }),
      err({ code: 'EAUTH', responseCode: 535 }),
      Object.assign(new Error('Connection timeout'), {
        code: 'ETIMEDOUT',
        command: 'CONN',
        timeoutType: 'CONNECT_TIMEOUT',
      }),
      err({ code: 'ENOSPC', syscall: 'write' }),
      err({ code: 'EROFS', syscall: 'open' }),
    ])
      expect(isHandoverUnavailable(unavailable), JSON.stringify(unavailable)).to.equal(true);
    for (const other of [
      err({ responseCode: 451 }),
      err({ responseCode: 550 }),
      err({ code: 'ETIMEDOUT', command: 'CONN' }),
      err({ code: 'ECONNECTION', command: 'CONN' }),
      err({ code: 'ENOSPC' }),
      null,
    ])
      expect(isHandoverUnavailable(other), JSON.stringify(other)).to.equal(false);
    expect(isRelayLoginRefused(err({ code: 'EAUTH', responseCode: 535 }))).to.equal(true);
    expect(isRelayLoginRefused(err({ code: 'ESOCKET', syscall: 'connect' }))).to.equal(false);
  });
});
