import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { createTestEngine, embeddedBackend } from '../src/testing';
import { APP_KEY_FILE } from '../src/secrets/app-key';
import { SERVICES } from '../src/container/service-keys';
import type { Mailer } from '../src/mail/mailer';

/** The permission bits, in octal as `ls -l` and chmod spell them. */
const modeOf = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);

describe('files the engine creates are its own user’s alone', () => {
  const backend = embeddedBackend();
  after(() => backend.dispose());

  it('makes DATA_DIR and the outbox 0700, the SQLite files, app.key and outbox mail 0600', async () => {
    const database = path.join(backend.dataDir, 'switchboard.sqlite');
    expect(fs.existsSync(backend.dataDir)).to.equal(false);
    // The embedded default on a fresh machine: the database in DATA_DIR, a key generated there.
    const engine = await createTestEngine(backend, {
      env: { DATABASE_URL: `sqlite:${database}`, APP_ENV: 'local', APP_KEY: '' },
    });
    try {
      await engine.container.resolve<Mailer>(SERVICES.Mailer).send({
        from: 'news@example.com',
        to: 'ada@example.com',
        subject: 'Hello Ada',
        text: 'Hi!',
      });
      const outbox = path.join(backend.dataDir, 'outbox');
      const [mail] = fs.readdirSync(outbox);
      expect({
        dataDir: modeOf(backend.dataDir),
        outbox: modeOf(outbox),
        // WAL mode keeps -wal and -shm while the connection is open.
        database: [database, `${database}-wal`, `${database}-shm`].map(modeOf),
        appKey: modeOf(path.join(backend.dataDir, APP_KEY_FILE)),
        mail: modeOf(path.join(outbox, mail)),
      }).to.deep.equal({ dataDir: '700', outbox: '700', database: ['600', '600', '600'], appKey: '600', mail: '600' });
    } finally {
      await engine.close();
    }
  });
});
