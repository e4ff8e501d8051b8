import fs from 'node:fs';
import path from 'node:path';

/** The addressees of every mail written to an outbox folder (the mailer's `.eml` files, no SMTP_URL). */
export function outboxRecipients(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const recipients: string[] = [];
  for (const file of fs.readdirSync(dir)) {
    if (!file.endsWith('.eml')) continue;
    const to = /^To: (.*)$/im.exec(fs.readFileSync(path.join(dir, file), 'utf8'));
    if (to) recipients.push(...to[1].split(',').map((a) => (/<([^>]+)>/.exec(a)?.[1] ?? a).trim().toLowerCase()));
  }
  return recipients;
}
