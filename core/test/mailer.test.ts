import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { createMailer } from '../src/mail/mailer';

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
    } finally {
      mailer.close();
      fs.rmSync(outboxDir, { recursive: true, force: true });
    }
  });
});
